"""Providers behind interfaces: embeddings and the chat LLM (OpenAI-compatible or offline)."""
