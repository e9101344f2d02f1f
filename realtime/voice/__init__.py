"""The live voice loop: audio in -> VAD -> STT (partials feed pre-fetch) -> inline correction
and hot context (the L1 insert queued off the turn's path) -> LLM turn with the tier's memory
tools -> TTS -> audio out.

Each step sits behind a Protocol (`interfaces.py`), so the offline defaults (faster-whisper
tiny.en and piper from registry packages, an energy VAD, any OpenAI-compatible chat server)
can be swapped without touching the loop. Memory is reached only through `MemoryService`'s
public methods (`partial`, `prepare_entries` / `store_entries`, `hot_context`, `call_tool`);
the dependency points voice -> service, never back. Heavy engines load on first use, so
importing this is cheap.
"""
