"""A tiny deterministic embedding model for pipeline tests: a bag of hashed words in 16
dimensions, so a test can tell models apart and predict any text's vector."""

from __future__ import annotations

import hashlib

import numpy as np


class HashEmbedder:
    """Bag of hashed words, normalized; another dimension than the real model's."""

    model_id = "test-hash-16"
    dimension = 16
    max_tokens = 256

    def embed(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for i, text in enumerate(texts):
            for word in text.lower().split():
                out[i, hashlib.blake2b(word.encode(), digest_size=1).digest()[0] % 16] += 1
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        norms[norms == 0] = 1
        return out / norms

    def count_tokens(self, text: str) -> int:
        return len(text.split()) + 2
