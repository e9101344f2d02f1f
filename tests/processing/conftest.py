"""Fixtures for the pure processing tests: one CRD3 episode from the shared evaluation data."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def crd3_episode(shared_data: Path) -> Path:
    path = shared_data / "crd3" / "cleaned" / "C1E001.json"
    if not path.exists():
        pytest.skip(f"shared evaluation data not found at {path} (set GLYPHOXA_SHARED_DATA)")
    return path
