"""The encoder window, chosen on data (`bench/voice_loop.py --window-study`)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from bench.voice_bench.scoring import name_misses, wer
from glyphoxa_pipelines.providers.speech import SpeechToText, TextToSpeech


def window_study(corpus: Path, pads: list[float], per_split: int) -> dict[str, Any]:
    """The encoder window, chosen on data: the STT corpus's lines with names (CRD3, demo; its
    own seeded tune / held-out split, `bench/build_stt_corpus.py`), spoken by piper at each
    line's recorded rate, decoded with the scene's names as hotwords in the 30 s window and
    with each padding; WER, entity-name error and CPU seconds per second of audio."""
    rows = [json.loads(line) for line in corpus.read_text(encoding="utf-8").splitlines()]
    rows = [r for r in rows if r["source"] != "locomo"]
    tts = TextToSpeech()
    shared = SpeechToText(cpu_threads=1)
    engines = {"full": shared, **{f"pad{p:g}": SpeechToText(cpu_threads=1, encoder_pad_s=p,
                                                            _model=shared.load()) for p in pads}}
    out: dict[str, Any] = {}
    for split in ("tune", "heldout"):
        lines = [r for r in rows if r["split"] == split][:per_split]
        sums = {k: [0, 0, 0, 0, 0.0] for k in engines}  # edits, words, misses, names, cpu
        audio_s = 0.0
        for r in lines:
            audio = tts.synthesize(r["reference"], length_scale=r["length_scale"])
            audio_s += audio.seconds
            names = [m["name"] for m in r["names"]]
            for label, engine in engines.items():
                c = time.process_time()
                heard = engine.transcribe(audio.samples, audio.sample_rate,
                                          hotwords=", ".join(r["scene"]) or None).text
                took = time.process_time() - c
                e, w = wer(r["reference"], heard)
                m, n = name_misses(r["reference"], heard, names)
                acc = sums[label]
                acc[0], acc[1], acc[2], acc[3], acc[4] = (acc[0] + e, acc[1] + w, acc[2] + m,
                                                          acc[3] + n, acc[4] + took)
        out[split] = {"lines": len(lines), **{label: {
            "wer": round(a[0] / max(a[1], 1), 3),
            "entity_error_rate": round(a[2] / max(a[3], 1), 3),
            "names": a[3], "cpu_rtf": round(a[4] / max(audio_s, 1e-3), 3)}
            for label, a in sums.items()}}
        for label, r in out[split].items():
            if label != "lines":
                print(f"{split:8} {label:6} WER {r['wer']:.3f} entity errors "
                      f"{r['entity_error_rate']:.3f} of {r['names']} names, CPU-RTF "
                      f"{r['cpu_rtf']:.3f}", flush=True)
    return {"bench": "voice_window", "corpus": str(corpus), "load_avg": os.getloadavg()[0],
            **out}
