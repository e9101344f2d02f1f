"""The same question gets the same memory whether the machine is idle or saturated: a query
set is searched twice, the second time beside a CPU burner spinning on every core, and the
returned turn ids must be identical (the full-text leg is always waited for; no deadline
decides what a result holds)."""

from __future__ import annotations

import os
import subprocess
import sys
import time

QUESTIONS = [
    "Who stole the Sunblade from the temple?",
    "Who sold the party a map of the old tunnels, and for how much?",
    "What did the barkeep say about wolves on the north road?",
    "How much gold did we agree for the wolf hunt?",
    "Where is the Iron Circle's hall?",
    "What is the blacksmith's name?",
    "Where did we rest before going into the tunnels?",
    "Which city is in the mountain?",
    "What happened at the Gilded Tankard?",
    "Who controls the mines?",
]
BURN = "import time\nend = time.time() + 120\nwhile time.time() < end:\n    pass\n"


async def _answers(svc, campaign_id: str) -> list[tuple[tuple[str, tuple[int, ...]], ...]]:  # type: ignore[no-untyped-def]
    from realtime.tools import ToolScope

    out = []
    for question in QUESTIONS:
        svc.embedder._cache.clear()  # every pass embeds its queries afresh
        res = await svc.call_tool("memory.search_sessions",
                                  {"query": question, "top_k": 4, "max_tokens": 300},
                                  ToolScope(campaign_id, None, None))
        assert res["status"] == "ok"
        out.append(tuple((r["source"]["session_id"], tuple(r["source"].get("entry_ids", ())))
                         + tuple(r["methods"]) for r in res["results"]))
    return out


async def test_the_same_questions_get_the_same_turns_beside_a_cpu_burner(  # type: ignore[no-untyped-def]
    rt_service, rt_seed
) -> None:
    quiet = await _answers(rt_service, rt_seed.campaign_id)
    assert all(quiet)
    # The keyword leg took part (else equality would say nothing about waiting for it).
    assert any("fulltext" in result for answer in quiet for result in answer)
    burners = [subprocess.Popen([sys.executable, "-c", BURN])
               for _ in range(max(2, os.cpu_count() or 2))]
    try:
        time.sleep(0.5)  # let them take the cores
        busy = await _answers(rt_service, rt_seed.campaign_id)
    finally:
        for p in burners:
            p.kill()
            p.wait()
    assert busy == quiet
