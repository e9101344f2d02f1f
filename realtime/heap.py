"""The service's start-up heap, set aside from the garbage collector once it is built.

A warm service holds about 200,000 tracked objects that live as long as the process: the
modules, the embedding model's runtime, the pools. CPython's oldest-generation collection
walks all of them, and it runs on whichever call happens to allocate past its threshold: on
this 2-core machine one full collection took 0.1 s idle and 1.1-2.1 s at load 9, a stall in
the middle of a voice turn (figures: docs/DESIGN.md). Once start-up is over they are
collected once and frozen (`gc.freeze`), so later collections walk only what the service
allocated since: the same collection then takes under 0.1 ms. Garbage made before the freeze
is collected first, so freezing keeps nothing that was already dead.
"""

from __future__ import annotations

import gc


def settle() -> int:
    """Collect, then freeze every object alive now; the number frozen in all."""
    gc.collect()
    gc.freeze()
    return gc.get_freeze_count()
