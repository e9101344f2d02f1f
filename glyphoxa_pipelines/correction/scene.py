"""The scene of a live session: the names said in its last turns, the context stage's prior.

Among thousands of known names, the few said in the turns just before (and the speaker's own)
are by far the likeliest to be said again, so the context stage (`context.py`) lets them win on
less resemblance. The scene is built from what the corrector itself settled, turn after turn:
names heard right and names it corrected, never the raw mishearings.

A speaker also keeps the names they themselves said earlier in the session, however long ago:
each player talks of their own few (their familiar, their god, the NPC they court), so these
are in play for them when the table's last turns have moved on. Names anyone said long ago
are not: over a whole session those are too many, and some made-up one comes near an
ordinary word Whisper doubted.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable

from glyphoxa_pipelines.correction.models import CorrectionResult
from glyphoxa_pipelines.correction.name_index import NameIndex
from glyphoxa_pipelines.correction.phonetic import scan_of

SCENE_TURNS = 40  # about two minutes of table talk: a name said then is still in play
SPEAKERS_KEPT = 64  # a table has a handful; more ids than this are not one session's players


def names_said(result: CorrectionResult, index: NameIndex) -> list[str]:
    """Canonical names of the entities a corrected utterance names: its corrections, and every
    window of words spelled exactly like a known name or alias (case aside)."""
    said = [c.entity for c in result.corrections if c.entity]
    text = result.text
    scan = scan_of(text)
    norms, count = scan.norms, len(scan.norms)
    by_joined, by_surface, by_edge = index.by_joined, index.by_surface, index.by_edge
    sizes = sorted(index.multi_sizes)
    for first in range(count):
        # only where a name can start: a single-word name, or a first word of a longer one
        longest = 1 if any(v[0] in by_joined for v in scan.variants[first]) else 0
        for n in sizes:
            if (n, "w:" + norms[first]) in by_edge:
                longest = n
        joined = ""
        for last in range(first, min(count, first + longest)):
            if last > first and not scan.joinable[last]:
                break
            # "Grimjaw's" names Grimjaw: the last word is read without its possessive too
            for norm, end, _ in scan.variants[last]:
                forms = by_joined.get(joined + norm)
                if not forms:
                    continue
                window = text[scan.starts[first] : end]
                folded = window.casefold()
                # "pike" may be the fish: a name of ordinary words counts only as written
                form = by_surface.get(window) or next(
                    (f for f in forms if not f.common and f.surface.casefold() == folded), None
                )
                if form is not None:
                    said.append(form.canonical)
                    break
            joined += norms[last]
    return list(dict.fromkeys(said))


def speaker_names(index: NameIndex, *names: str | None) -> list[str]:
    """Canonical names of those of the speaker's names that are known names: the NPC voiced,
    or a player whose display name is their character's. They join the scene of their turn."""
    out = []
    for name in names:
        form = index.by_surface.get(" ".join((name or "").split()))
        if form is not None:
            out.append(form.canonical)
    return out


class SceneMemory:
    """The names of one session's last `turns` utterances, oldest forgotten first, and those
    each speaker said in the session so far.

    One per live session (the transcript writer keeps them) or per pipeline pass over a
    session's entries in order. Not thread-safe beyond what `deque` gives: one writer a session.
    """

    __slots__ = ("_turns", "_said", "_by_speaker")

    def __init__(self, turns: int = SCENE_TURNS) -> None:
        if turns < 1:
            raise ValueError(f"a scene spans at least one turn, not {turns}")
        self._turns: deque[tuple[str, ...]] = deque(maxlen=turns)
        self._said: tuple[str, ...] | None = ()  # the turns' names, None when out of date
        # speaker → the names they said this session, in the order first said
        self._by_speaker: dict[str, dict[str, None]] = {}

    def names(self, *extra: str | None, speaker: str | None = None) -> tuple[str, ...]:
        """The scene as distinct names, with `extra` (the speaker's own name) first and the
        names `speaker` said earlier in the session last."""
        if self._said is None:
            self._said = tuple(dict.fromkeys(name for turn in self._turns for name in turn))
        given = [name for name in extra if name]
        own = self._by_speaker.get(speaker) if speaker else None
        if not given and not own:
            return self._said
        return tuple(dict.fromkeys([*given, *self._said, *(own or ())]))

    def remember(self, names: Iterable[str], speaker: str | None = None) -> None:
        """One turn said these names (possibly none: a turn without names still ages the
        scene), by `speaker` when known."""
        turn = tuple(names)
        if turn or (self._turns and self._turns[0] and len(self._turns) == self._turns.maxlen):
            self._said = None  # a name came, or one may have aged out
        self._turns.append(turn)
        if speaker and turn:
            own = self._by_speaker.pop(speaker, None) or {}
            own.update(dict.fromkeys(turn))
            self._by_speaker[speaker] = own  # the latest speaker last: the first to go is idle
            if len(self._by_speaker) > SPEAKERS_KEPT:
                del self._by_speaker[next(iter(self._by_speaker))]
