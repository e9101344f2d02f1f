"""The correction pipeline: stage 1 (phonetic, inline) then optional stage 2 (LLM, background).

Raw text is always kept next to the corrected text, and every correction carries raw-text
offsets, so a later, better pass can start again from what was actually heard.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from glyphoxa_pipelines.correction.context import context_corrections
from glyphoxa_pipelines.correction.doubted_words import very_doubted
from glyphoxa_pipelines.correction.garbled_lines import heard_clearly
from glyphoxa_pipelines.correction.heard_length import heard_in_full
from glyphoxa_pipelines.correction.llm_corrector import LLMCorrector, llm_corrections
from glyphoxa_pipelines.correction.models import Correction, CorrectionConfig, CorrectionResult
from glyphoxa_pipelines.correction.name_index import EntitySpec, NameIndex, build_index
from glyphoxa_pipelines.correction.names_out_of_play import in_play_only, sounded_in_play_only
from glyphoxa_pipelines.correction.phonetic import find_corrections, scan_of
from glyphoxa_pipelines.correction.possessive import mask_possessives, with_possessives
from glyphoxa_pipelines.correction.scene_rivals import yield_to_scene
from glyphoxa_pipelines.correction.sure_words import doubted_or_close

DEFAULT_CONFIG = CorrectionConfig()


def apply_corrections(raw: str, corrections: Iterable[Correction]) -> str:
    """`raw` with each correction's span replaced; spans must not overlap."""
    parts: list[str] = []
    pos = 0
    for c in sorted(corrections, key=lambda c: c.start):
        if c.start < pos:
            raise ValueError(f"overlapping corrections at {c.start}")
        parts.append(raw[pos : c.start])
        parts.append(c.replacement)
        pos = c.end
    parts.append(raw[pos:])
    return "".join(parts)


def correct(
    text: str,
    entities: NameIndex | Iterable[EntitySpec],
    word_confidences: Sequence[float] | None = None,
    *,
    scene: Iterable[str] | None = None,
    llm: LLMCorrector | None = None,
    config: CorrectionConfig | None = None,
) -> CorrectionResult:
    """Correct misheard entity names in one utterance.

    `entities` is a prepared `NameIndex` (fast path: build it once per entity list) or names,
    `(canonical, aliases)` pairs or Entity-like objects (an index is built for this call).
    `word_confidences` (Whisper's word probabilities) align with the whitespace-separated words
    of `text`; `scene` names the entities said lately or by the speaker. Both let the context
    stage accept mishearings stage 1 would not risk; confidences also steer stage 2, which runs
    only when `llm` is given.
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be str, not {type(text).__name__}")
    cfg = config or DEFAULT_CONFIG
    index = build_index(entities, common_zipf=cfg.common_zipf)
    if scene is not None and not isinstance(scene, tuple):
        # once: every stage below keeps what it makes of a scene per scene tuple
        scene = tuple(scene)
    scan = scan_of(text)
    stage1, settled = find_corrections(text, index, cfg, scan=scan)
    if scene or word_confidences:
        extra = context_corrections(
            text, index, settled, word_confidences, scene, cfg, scan=scan, changed=stage1
        )
        masked = mask_possessives(text, word_confidences, index.by_joined, cfg)
        if masked is not None:  # "scamlin's": the name read without its possessive too
            again = context_corrections(
                masked.text,
                index,
                settled,
                word_confidences,
                scene,
                cfg,
                changed=stage1,
                ending_at=masked.base_ends,  # only the fixes `with_possessives` keeps
            )
            extra = with_possessives(extra, again, masked)
        done = [*settled, *((c.start, c.end) for c in extra)]
        extra += very_doubted(text, index, scan, word_confidences, scene, done, cfg)
        stage1, settled = yield_to_scene(stage1, settled, index, scene)
        stage1, settled = sounded_in_play_only(
            text, stage1, settled, index, scene, word_confidences, cfg
        )
        extra, _ = yield_to_scene(extra, [], index, scene)
        extra = in_play_only(text, extra, index, scene, word_confidences, cfg)
        extra = heard_clearly(text, extra, word_confidences)
        extra = doubted_or_close(text, extra, word_confidences, cfg)
        extra = heard_in_full(extra, cfg)
        if extra:
            stage1 = sorted([*stage1, *extra], key=lambda c: c.start)
            settled = sorted([*settled, *((c.start, c.end) for c in extra)])
    corrections = list(stage1)
    if llm is not None:
        stage1_text = apply_corrections(text, stage1)
        corrections += llm_corrections(
            text, stage1_text, stage1, settled, index, word_confidences, llm, cfg
        )
    corrections.sort(key=lambda c: c.start)
    return CorrectionResult(apply_corrections(text, corrections), text, corrections)


class Corrector:
    """An index, a config and an optional LLM bundled for repeated use on a live session."""

    def __init__(
        self,
        entities: NameIndex | Iterable[EntitySpec],
        *,
        llm: LLMCorrector | None = None,
        config: CorrectionConfig | None = None,
    ) -> None:
        self.config = config or DEFAULT_CONFIG
        self.index = build_index(entities, common_zipf=self.config.common_zipf)
        self.llm = llm

    def __call__(
        self,
        text: str,
        word_confidences: Sequence[float] | None = None,
        *,
        scene: Iterable[str] | None = None,
    ) -> CorrectionResult:
        return correct(
            text, self.index, word_confidences, scene=scene, llm=self.llm, config=self.config
        )
