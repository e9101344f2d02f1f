"""Room for the live voice loop (not built yet): STT -> correction -> pre-fetch -> hot context
-> LLM -> TTS, each step behind a provider interface.

Belongs here: the loop, its turn queue and the provider interfaces for STT / LLM / TTS it
drives. It reaches memory only through `MemoryService`'s public methods (`partial`,
`write_entries`, `hot_context`, `call_tool`). Dependency direction: voice -> service, never back.
"""
