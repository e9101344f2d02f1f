"""Session summaries: the session's story in order, scene by scene.

Offline (`story-v2`): only the in-game sentences count (`table_talk`: no rules, dice, breaks or
sponsor plugs can reach a summary), cut into scenes (`scenes`). Each scene contributes the DM's
narration that carries it: where the party is when the scene opens, then its strongest events
(a reveal, a deal, a decision), and for a fight its opening and its outcome (the last kill,
fall or flight of the scene). A sentence's weight is how much of the session's own vocabulary
it carries (names and rare words the DM keeps using, weighted by how uncommon they are in
English), so a scene is told by the lines that name its people and places, not by filler.
The last scene always gives its final strong sentence: a recap needs the cliffhanger.
Sentences are told in the story's terms: "Vex, you ..." about Vex, a player's "I ..." about
the character, and made written prose (`prose`: fillers out, fragments and the table's voice
refused); none opens on a pronoun whose antecedent would be left out. Each scene's header
names its people and places and the things it keeps coming back to ("the bridge, duergar").

`extractive-v1` rows become stale through the version mechanism (`pipeline/versions.py`).

With an LLM configured, `summarize_session_llm` maps each scene's in-game lines to a partial
summary and reduces them in one call (`llm-summary-v2`); None sends the caller back to the
offline summary.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np

from glyphoxa_pipelines.memory.models import Chunk, SessionSummary
from glyphoxa_pipelines.processing.cast import infer_characters
from glyphoxa_pipelines.processing.prose import clean_sentence, usable, zipf
from glyphoxa_pipelines.processing.retelling import (
    retell_address,
    retell_declaration,
    retell_vocative,
)
from glyphoxa_pipelines.processing.scenes import (
    Scene,
    StorySentence,
    event_kinds,
    lines_from_chunks,
    split_scenes,
)
from glyphoxa_pipelines.processing.table_talk import (
    ClassifiedSentence,
    TableContext,
    TableLine,
    TalkKind,
    classify_transcript,
)

if TYPE_CHECKING:
    from glyphoxa_pipelines.providers.embeddings import Embedder
    from glyphoxa_pipelines.providers.llm import ChatLLM

SUMMARIZER_VERSION = "story-v3"  # v3: the campaign's known party; "You ..." told of the party
LLM_SUMMARIZER_VERSION = "llm-summary-v2"  # v2: map over scenes of in-game lines, then reduce

_WORD = re.compile(r"[A-Za-z][A-Za-z'’-]*[A-Za-z]")
NAME_BOOST = 1.5
LENGTH_EXPONENT = 0.7  # sentence weight / words ** this: dense lines over rambling ones
WORDS_PER_POINT = 600
SCENE_NAMES = 8
SCENE_THINGS = 4  # the header's things; more reads as a tag list
POINTS_PER_SCENE = 2  # about 8 scenes a 4-hour session, as the LLM path maps it; each
# scene's header (its people, places and things) is what a reader scans for
ADDRESSED_SENTENCES = 2  # the DM's answer to a player: its first sentences are about them
EVENT_BONUS = 0.35
MAX_DEEDS = 2  # per scene: the characters' own deeds, retold from their players' words


class Vocabulary:
    """How much each word says about this session: used often here, rare in English.

    Names (capitalized away from the start of a sentence) weigh half again as much: a
    summary that names the people and places of a scene is one a player can follow.
    """

    def __init__(self, sentences: Iterable[str], names: Iterable[str] = ()) -> None:
        counts: Counter[str] = Counter()
        capital: Counter[str] = Counter()
        for text in sentences:
            for k, word in enumerate(_WORD.findall(text)):
                key = _key(word)
                counts[key] += 1
                if k > 0 and word[0].isupper():
                    capital[key] += 1
        self.names = {  # "The Rusty Anvil" names the Anvil, not "the"; "Vex'ahlia" is "Vex"
            _key(f) for n in names for w in _WORD.findall(n) for f in _forms(w)
            if zipf(_key(f)) < 6.0}
        self.known = set(self.names)  # the campaign's and the party's names
        self.names |= {
            w for w, n in capital.items()
            if n >= 2 and n >= 0.8 * counts[w] and not w.startswith("i'") and zipf(w) < 4.0
        }
        self.weight: dict[str, float] = {}
        for word, n in counts.items():
            if n < 2 or len(word) < 3:
                continue
            rarity = min(1.5, max(0.0, (6.3 - zipf(word)) / 3.0))
            if rarity <= 0:
                continue
            boost = NAME_BOOST if word in self.names else 1.0
            self.weight[word] = min(3.0, math.log1p(n)) * rarity * boost

    def content(self, text: str) -> set[str]:
        return {k for k in (_key(w) for w in _WORD.findall(text)) if k in self.weight}

    def score(self, text: str) -> float:
        words = self.content(text)
        n = len(text.split())
        return sum(self.weight[w] for w in words) / max(n, 1) ** LENGTH_EXPONENT


def _forms(name: str) -> list[str]:
    """A name and its short form: the DM calls Vex'ahlia "Vex"."""
    short = re.split(r"['’]", name)[0]
    return [name, short] if short != name and len(short) >= 3 else [name]


def _key(word: str) -> str:
    return word.lower().replace("’", "'").removesuffix("'s")


# A sentence opening on a pronoun leans on the one before it ("He forged it himself"): out
# of its place it names nobody, so a summary or recap never starts a point with one.
DANGLING = re.compile(r"^(?:he|she|it|its|his|her|him|they|them|their|there)\b", re.I)


def _pick_scene(
    scene: Scene, vocab: Vocabulary, per_scene: int, last: bool,
    deeds: Sequence[StorySentence] = (), first: bool = False,
) -> list[StorySentence]:
    cleaned = (replace(s, text=clean_sentence(s.text)) for s in scene.narration)
    candidates = [s for s in cleaned if usable(s.text) and not DANGLING.match(s.text)]
    if not candidates:
        return []
    scored = {
        s.order: vocab.score(s.text) + EVENT_BONUS * len(s.events - {"setting"})
        for s in [*candidates, *deeds]
    }
    picks: list[StorySentence] = []
    if first:  # where the session opens; later scenes go on from there, and their header
        # names the people and places (a forced opening was most often a long description)
        head = candidates[: max(3, len(candidates) // 6)]
        picks.append(max(head, key=lambda s: scored[s.order] + 0.5 * ("setting" in s.events)))
    if scene.fight:
        outcomes = [s for s in candidates if "outcome" in s.events and s not in picks]
        if outcomes:
            picks.append(outcomes[-1])
    if last:  # the cliffhanger: the strongest of the scene's closing lines
        tail = candidates[-max(3, len(candidates) // 5):]
        closing = max(tail, key=lambda s: scored[s.order])
        if closing not in picks:
            picks.append(closing)
    rest = sorted([*candidates, *deeds], key=lambda s: -scored[s.order])
    n_deeds = 0
    for s in rest:
        if len(picks) >= per_scene:
            break
        if s in picks or (s.kind is TalkKind.IN_CHARACTER and n_deeds >= MAX_DEEDS):
            continue
        words = vocab.content(s.text)
        if any(_overlap(words, seen := vocab.content(p.text)) > 0.5 and len(words & seen) >= 2
               for p in picks):
            continue  # says what a pick already says (one shared name is not that)
        picks.append(s)
        n_deeds += s.kind is TalkKind.IN_CHARACTER
    return sorted(picks[:max(per_scene, 2 if scene.fight or last else 1)], key=lambda s: s.order)


def scene_names(
    scene: Scene, vocab: Vocabulary, context: TableContext, limit: int = 6
) -> list[str]:
    """The people and places a scene keeps naming (in-game lines only), most named first:
    the who and where a reader looks for before the what."""
    counts: Counter[str] = Counter()
    for s in scene.sentences:
        for k, word in enumerate(_WORD.findall(s.text)):
            key = _key(word)
            if (word[0].isupper() and not word.isupper() and key in vocab.names
                    and not context.mentions_cast(word)):  # an opening capital may be a word,
                # not a known name's ("Vex, you ...")
                known = key in vocab.known
                counts[word.replace("’", "'").removesuffix("'s")] += 1 if k or known else 0.5
    return [w for w, n in counts.most_common(limit) if n >= 2]


def scene_things(
    scene: Scene, scenes: Sequence[Scene], vocab: Vocabulary, limit: int = 4
) -> list[str]:
    """The creatures, places and objects a scene keeps coming back to (plain nouns the DM
    repeats in this scene more than elsewhere: "the bridge", "duergar", "an ogre"): with the
    names, what a reader needs to know what the scene was about."""
    def counts(sc: Scene) -> Counter[str]:
        out: Counter[str] = Counter()
        for s in sc.narration:  # "(laughter)" is the transcript's, not the scene's
            text = re.sub(r"\([^)]*\)|\[[^\]]*\]", " ", s.text)
            out.update(_key(w) for w in _WORD.findall(text) if w.islower())
        return out

    here = counts(scene)
    nouns = {  # seen after a determiner at least once: a thing, not a quality ("lanky")
        _key(m.group(1)) for s in scene.narration for m in _AFTER_DETERMINER.finditer(s.text)
    }
    total: Counter[str] = Counter()
    for sc in scenes:
        total.update(counts(sc))
    share = len(scene.narration) / max(1, sum(len(sc.narration) for sc in scenes))
    ranked = [
        (n * (n / total[w]) / max(share, 1e-6), w) for w, n in here.items()
        if n >= 3 and w in nouns and w in vocab.weight and w not in vocab.names
        and _noun_like(w)
    ]
    picked: list[str] = []
    for _, w in sorted(ranked, reverse=True):
        if not any(w.rstrip("s") == p.rstrip("s") for p in picked):  # "troll", "trolls"
            picked.append(w)
    return picked[:limit]


_AFTER_DETERMINER = re.compile(
    r"\b(?:the|a|an|this|these|those|its|their|his|her)\s+([a-z][a-z'’-]*[a-z])"
    r"(?=[,.;!?]|\s+(?:of|in|on|at|to|with|from|into|across|is|was|are|were|that|which|who|as|"
    r"and|but|begins?|starts?|comes?|goes|falls?)\b)")  # "the bridge, ...": a noun, not "a wooden"


def _noun_like(word: str) -> bool:
    return not word.endswith(("ly", "ing", "ed")) and 2.5 < zipf(word) < 5.0


def _overlap(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a and b else 0.0


def summarize_lines(
    lines: Sequence[TableLine],
    *,
    campaign_id: str,
    session_id: str,
    context: TableContext | None = None,
    world_names: Sequence[str] = (),
    characters: Mapping[str, str] | None = None,
    max_points: int | None = None,
) -> SessionSummary:
    """The story summary of a session given as table lines (speaker, role, text).

    `characters` maps player speaker labels to their characters' names as the campaign
    already knows them (earlier sessions); what `cast.infer_characters` can tell from these
    lines is added and wins (a player may have a new character). Players' first-person deeds
    are retold under the character's name, and a player without a character is never quoted.
    """
    if not lines:
        raise ValueError("cannot summarize a session without lines")
    context = context or TableContext.from_lines(lines, world_names=world_names)
    characters = known_party(characters, infer_characters(lines, context))
    classified = _name_the_addressed(classify_transcript(lines, context), lines, context,
                                     characters)
    deeds_of = _deeds(classified, lines, context, characters)
    story = [c.text for c in classified if c.kind is TalkKind.NARRATION]
    if not story:
        return SessionSummary(session_id, campaign_id, "", [], method=SUMMARIZER_VERSION)
    words = sum(len(t.split()) for t in story)
    if max_points is None:  # about one point per 600 words of narration, 8 to 24
        max_points = min(24, max(8, words // WORDS_PER_POINT))
    # a short session (the 8-point floor) gets a few full scenes, not many one-line ones
    n_scenes = max(2, round(min(max_points / POINTS_PER_SCENE,
                                words / (POINTS_PER_SCENE * WORDS_PER_POINT))))
    scenes = split_scenes(classified, target_scenes=n_scenes)
    vocab = Vocabulary(story + [d.text for d in deeds_of.values()],
                       [*world_names, *characters.values()])
    per_scene = max(1, round(max_points / max(1, len(scenes))))
    key_points: list[str] = []
    paragraphs: list[str] = []
    for scene in scenes:
        deeds = [deeds_of[s.order] for s in scene.sentences if s.order in deeds_of]
        picks = _pick_scene(scene, vocab, per_scene, last=scene is scenes[-1], deeds=deeds,
                            first=scene is scenes[0])
        sentences = [_finish(clean_sentence(s.text)) for s in picks]
        if sentences:
            key_points += sentences
            names = scene_names(scene, vocab, context, limit=SCENE_NAMES)
            things = scene_things(scene, scenes, vocab, limit=SCENE_THINGS)
            label = ", ".join(names) + ("; " + ", ".join(things) if things and names else "")
            header = [f"Scene {len(paragraphs) + 1}: {label}."] if names else []
            paragraphs.append(" ".join(header + sentences))
    return SessionSummary(
        session_id=session_id,
        campaign_id=campaign_id,
        summary="\n\n".join(paragraphs),
        key_points=key_points,
        method=SUMMARIZER_VERSION,
    )


def known_party(
    campaign: Mapping[str, str] | None, session: Mapping[str, str]
) -> dict[str, str]:
    """Who plays whom for one session: the campaign's mapping from earlier sessions, with what
    this session's own lines tell on top. Why: a table states it once (introductions in the
    first session) and seldom again; on CRD3 the session alone maps one player in five of
    eight episodes, so most of the DM's "you" could not be told about a character."""
    return {**(campaign or {}), **session}


def _name_the_addressed(
    classified: list[ClassifiedSentence], lines: Sequence[TableLine], context: TableContext,
    characters: Mapping[str, str],
) -> list[ClassifiedSentence]:
    """The DM's first sentences in answer to one player, "You pull the lever.", told about
    that player's character ("Grog pulls the lever."), any "Vex, you ..." told about the
    named, and the DM's "You ..." to the whole table about the party: the story's terms, not
    the table's (a written story has no "you")."""
    out: list[ClassifiedSentence] = []
    position = 0
    known = {f for name in characters.values() for f in _forms(name)}

    def is_character(word: str) -> bool:  # a name the DM calls a character by, not a player
        return not context.mentions_cast(word) and (word in known or zipf(word) < 3.0)

    for k, c in enumerate(classified):
        position = position + 1 if k and classified[k - 1].line_index == c.line_index else 0
        i = c.line_index
        name = characters.get(lines[i - 1].speaker) if i > 0 else None
        if c.kind is TalkKind.NARRATION:
            retold = retell_vocative(c.text, is_character)
            answering = (i > 0 and position < ADDRESSED_SENTENCES
                         and not context.is_dm(lines[i - 1].speaker, lines[i - 1].role))
            if not retold and name and answering:
                retold = retell_address(c.text, name)
            if not retold and not answering:
                retold = retell_address(c.text, "The party")  # the DM telling the table
            if retold:
                c = replace(c, text=retold)
        out.append(c)
    return out


_NAMED_DEED = re.compile(r"^(?P<name>[A-Z][\w'’-]+) [a-z]+s\b")


def _deeds(
    classified: Sequence[ClassifiedSentence], lines: Sequence[TableLine],
    context: TableContext, characters: Mapping[str, str],
) -> dict[int, StorySentence]:
    """Players' in-character deeds, by order: first person retold in the third ("I grab" ->
    "Vex grabs"), or already told in the third person under a name the DM's narration uses
    ("Brannoc walks to the counter"), which is how some tables play."""
    story_names = {
        w for c in classified if c.kind is TalkKind.NARRATION
        for w in re.findall(r"(?<!^)\b[A-Z][\w'’-]+", c.text)
    }
    out: dict[int, StorySentence] = {}
    for order, c in enumerate(classified):
        if (c.kind is not TalkKind.IN_CHARACTER or context.is_dm(c.speaker)
                or lines[c.line_index].role not in ("player", "")):
            continue
        text = clean_sentence(c.text)
        name = characters.get(c.speaker)
        retold = retell_declaration(text, name) if name else None
        named = _NAMED_DEED.match(text)
        if (not retold and named and named.group("name") in story_names
                and not context.mentions_cast(named.group("name"))):
            retold = _finish(text)
        if retold and usable(retold):
            out[order] = StorySentence(order, c.speaker, retold, c.kind, event_kinds(retold))
    return out


def _finish(text: str) -> str:
    return text if text.endswith((".", "!", '"', "”", "'")) else text + "."


def summarize_session(
    chunks: Sequence[Chunk],
    embeddings: np.ndarray | None = None,
    *,
    embedder: Embedder | None = None,
    campaign_id: str | None = None,
    session_id: str | None = None,
    max_points: int | None = None,
    dm_names: Sequence[str] = (),
    world_names: Sequence[str] = (),
    characters: Mapping[str, str] | None = None,
) -> SessionSummary:
    """Story summary of a session from its chunks (any order; sorted by `seq`).

    DM lines are recognised by speaker names in `dm_names` (default: speakers labelled DM/GM,
    or the most talkative speaker); `world_names` are the campaign's in-game names, which mark
    story and weigh as names. `embeddings`/`embedder` are accepted for the pipeline's call and
    checked, but the story picks need neither.
    """
    chunks = sorted(chunks, key=lambda c: c.seq)
    if not chunks:
        raise ValueError("cannot summarize a session without chunks")
    if embeddings is not None and len(embeddings) != len(chunks):
        raise ValueError("embeddings must have one row per chunk")
    del embedder
    lines = lines_from_chunks(chunks, dm_names)
    return summarize_lines(
        lines,
        campaign_id=campaign_id or chunks[0].campaign_id,
        session_id=session_id or chunks[0].session_id,
        context=TableContext.from_lines(lines, dm_speakers=dm_names, world_names=world_names),
        world_names=world_names,
        characters=characters,
        max_points=max_points,
    )


LLM_SCENE_SYSTEM = (
    "You summarize one scene of a tabletop role-playing game session for the characters' "
    "long-term memory. The lines are the in-game part of the transcript: the DM's narration "
    "and characters' speech. Tell what happened in the story, in order: where the scene takes "
    "place, who was met, decisions, reveals, deals, fights and their outcomes. Use character "
    "names, never the players' names; no game mechanics. Answer with one JSON object: "
    '{"summary": "two to four sentences", "key_points": ["short factual sentence", ...]}.'
)
LLM_REDUCE_SYSTEM = (
    "You merge scene summaries of one tabletop role-playing game session into the session's "
    "story, in order: decisions, reveals, deals, fights and their outcomes, places visited, "
    "who was met, and how the session ended. Invent nothing. Answer with one JSON object: "
    '{"summary": "one or two paragraphs", "key_points": ["short factual sentence", ...]}.'
)


def summarize_session_llm(
    chunks: Sequence[Chunk],
    llm: ChatLLM,
    *,
    campaign_id: str | None = None,
    session_id: str | None = None,
    dm_names: Sequence[str] = (),
    world_names: Sequence[str] = (),
    characters: Mapping[str, str] | None = None,
    window_chars: int = 24_000,
    target_scenes: int = 8,
) -> SessionSummary | None:
    """Map-reduce: one partial summary per scene of in-game lines, then one merge call.

    Returns None when no scene got a usable answer, so the caller falls back to the offline
    summary; a failed merge falls back to the partials in order.
    """
    chunks = sorted(chunks, key=lambda c: c.seq)
    if not chunks:
        return None
    campaign_id = campaign_id or chunks[0].campaign_id
    session_id = session_id or chunks[0].session_id
    lines = lines_from_chunks(chunks, dm_names)
    context = TableContext.from_lines(lines, dm_speakers=dm_names, world_names=world_names)
    characters = known_party(characters, infer_characters(lines, context))
    classified = classify_transcript(lines, context)
    scenes = split_scenes(classified, target_scenes=target_scenes)
    partials: list[dict] = []
    for scene in scenes:
        for n, window in enumerate(_scene_windows(scene, context, characters, window_chars)):
            part = f" (part {n + 1})" if n else ""
            answer = llm.complete_json(
                LLM_SCENE_SYSTEM,
                f"Scene {scene.index + 1} of {len(scenes)}{part}:\n{window}",
            )
            if answer and isinstance(answer.get("summary"), str) and answer["summary"].strip():
                partials.append(answer)
    if not partials:
        return None
    if len(partials) == 1:
        final = partials[0]
    else:
        joined = "\n\n".join(
            f"Scene {i}: {p['summary']}\nKey points: {p.get('key_points', [])}"
            for i, p in enumerate(partials, start=1)
        )
        final = llm.complete_json(LLM_REDUCE_SYSTEM, f"Scene summaries in order:\n{joined}")
        if not final or not isinstance(final.get("summary"), str) or not final["summary"].strip():
            final = {
                "summary": " ".join(p["summary"] for p in partials),
                "key_points": [k for p in partials for k in p.get("key_points") or []],
            }
    points = [str(k) for k in final.get("key_points") or [] if str(k).strip()]
    return SessionSummary(
        session_id=session_id,
        campaign_id=campaign_id,
        summary=str(final.get("summary") or " ".join(points)),
        key_points=points,
        method=LLM_SUMMARIZER_VERSION,
    )


def _scene_windows(
    scene: Scene, context: TableContext, characters: Mapping[str, str], window_chars: int
) -> list[str]:
    """A scene's in-game lines as "Speaker: text", cut to the model's window; the DM is
    labelled DM and a player by their character when known, so the model tells the story
    in the characters' names."""
    rows: list[str] = []
    for s in scene.sentences:
        if s.kind is TalkKind.NARRATION or context.is_dm(s.speaker):
            who = "DM"
        else:
            who = characters.get(s.speaker, s.speaker)
        if rows and rows[-1].startswith(f"{who}: "):
            rows[-1] += " " + s.text
        else:
            rows.append(f"{who}: {s.text}")
    windows, current = [], ""
    for row in rows:
        if current and len(current) + len(row) > window_chars:
            windows.append(current)
            current = ""
        current += row + "\n"
    return [*windows, current] if current else windows
