"""The realtime package's seams: search does not reach back into the service, every
registered tool has a handler, and search settings are frozen recipes."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path

import pytest

from realtime.session_search import PREFETCH_SEARCH, RECIPES, SESSION_SEARCH
from realtime.tools import TOOLS

ROOT = Path(__file__).resolve().parents[2]


def test_search_and_tools_import_without_the_service() -> None:
    code = (
        "import sys\n"
        "import realtime.session_search, realtime.tools.dispatch, realtime.prefetch.prefetcher\n"
        "assert 'realtime.service' not in sys.modules, 'a part imports the composition root'\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr


def test_every_registered_tool_has_a_handler() -> None:
    from realtime.tools.dispatch import HANDLERS

    assert set(HANDLERS) == set(TOOLS)


def test_recipes_are_frozen_variants_of_the_tools() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        SESSION_SEARCH.top_k = 3  # type: ignore[misc]
    assert (PREFETCH_SEARCH.top_k, PREFETCH_SEARCH.max_tokens) == (6, 400)
    assert dataclasses.replace(PREFETCH_SEARCH, top_k=8, max_tokens=1500) == SESSION_SEARCH
    assert RECIPES["vector_only"].fusion_weights == (1.0, 0.0)
    assert SESSION_SEARCH.leg_size(8) == 24 and SESSION_SEARCH.leg_size(2) == 15
