"""Which names the corrector may rewrite heard words into: the one rule, used by every loader.

A correction target turns every word that sounds like it into that name, so a wrong one does
damage on every later line: an extracted "Trinket's" once rewrote "trinkets" in six episodes.
An extractor's guess is therefore not enough. A spelling becomes a target when the DM made or
confirmed it (the DM's and imported entities; an extracted entity the DM edited becomes the
DM's), or when the pipeline saw that exact spelling in at least `MIN_SESSIONS` sessions and
never as an ordinary lower-case word (an extracted "Trinket" beside "a trinket"). A
possessive ("Trinket's") or a plural of an English word ("Trinkets") is never a target, whoever
wrote it: the corrector would turn the ordinary word into it.

Callers: the pipeline's correction step, the published STT/corrector name list, the realtime
name cache and the CLI's keyword list. `correction_entities_op` loads and applies the rule in
one place; `correction_targets` is the rule itself over plain data (tested without a
database).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import replace

from glyphoxa_pipelines.db.operations import Op, fetch_all
from glyphoxa_pipelines.memory.models import Entity
from glyphoxa_pipelines.memory.pipeline_rows.ownership import EPISODE_TYPE
from glyphoxa_pipelines.memory.rows import from_row

MIN_SESSIONS = 2
_POSSESSIVE = re.compile(r"['’`]s?$|['’`]s\b", re.I)
_NOT_PLURAL_ENDINGS = ("ss", "us", "is", "os", "as", "ys")
# An English word at least this common ("trinket" 2.7) makes "<word>s" its plural, not a
# name; a name such as "Scanlan" (2.49) keeps its possessive-free forms.
_PLURAL_STEM_ZIPF = 2.6


def _english_zipf(word: str) -> float:
    from wordfreq import zipf_frequency  # loads its word lists: only when a name needs it

    return float(zipf_frequency(word, "en"))


def is_name_form(spelling: str) -> bool:
    """False for what is not a name's own form: a possessive ("Trinket's", "Grog's axe"),
    or a single word that is the plural of an English word ("Trinkets", "Goblins")."""
    text = spelling.strip()
    if len(text) < 2 or _POSSESSIVE.search(text):
        return False
    words = text.split()
    if len(words) == 1:
        low = text.lower()
        if low.endswith("s") and not low.endswith(_NOT_PLURAL_ENDINGS):
            stem = low[:-1]
            stem_es = low[:-2] if low.endswith("es") else stem
            if max(_english_zipf(stem), _english_zipf(stem_es)) >= _PLURAL_STEM_ZIPF:
                return False
    return True


def _confirmed(entity: Entity) -> bool:
    return entity.provenance != "extracted" or bool(entity.attributes.get("dm_confirmed"))


def correction_targets(
    entities: Iterable[Entity], sessions_seen: Mapping[tuple[str, str], int]
) -> list[Entity]:
    """The entities whose names the corrector may use, each cut to its target spellings.

    `sessions_seen[(entity id, spelling)]` is the number of sessions whose transcript has that
    exact spelling (extracted entities only; a missing key is 0). The same key with the
    spelling in lower case counts sessions where it is written as an ordinary word ("a
    trinket"): such a name needs the DM, or the corrector turns the word into it. An entity
    left with no
    spelling is dropped; one whose canonical name is not a target keeps its first target
    alias as its name.
    """
    out = []
    for entity in entities:
        if entity.type == EPISODE_TYPE:
            continue
        confirmed = _confirmed(entity)
        kept = [
            s
            for s in dict.fromkeys([entity.name, *entity.aliases])
            if is_name_form(s)
            and (
                confirmed
                or (
                    sessions_seen.get((entity.id, s), 0) >= MIN_SESSIONS
                    and not sessions_seen.get((entity.id, s.lower()), 0)  # also a word here
                )
            )
        ]
        if kept:
            out.append(replace(entity, name=kept[0], aliases=kept[1:]))
    return out


def correction_entities_op(campaign_id: str) -> Op[list[Entity]]:
    """The campaign's correction targets: its entities, and for the extracted ones the
    sessions each spelling was seen in (chunks tagged with the entity that contain the exact
    spelling; the GIN index on `entity_ids` keeps this to the entity's own chunks)."""
    rows = yield fetch_all(
        "SELECT * FROM entities WHERE campaign_id = %s ORDER BY id", (campaign_id,)
    )
    entities = [from_row(Entity, r) for r in rows]
    seen_rows = yield fetch_all(
        """SELECT e.id, n.spelling,
                  count(DISTINCT c.session_id) FILTER (WHERE strpos(c.text, n.spelling) > 0)
                      AS sessions,
                  count(DISTINCT c.session_id) FILTER (
                      WHERE n.spelling ~ '^[A-Za-z]+$'
                        AND c.text ~ ('(^|[^A-Za-z''])' || lower(n.spelling) || '([^A-Za-z]|$)')
                  ) AS as_word
             FROM entities e
             CROSS JOIN LATERAL unnest(array_prepend(e.name, e.aliases)) AS n(spelling)
             JOIN chunks c ON c.campaign_id = e.campaign_id AND c.entity_ids @> ARRAY[e.id]
            WHERE e.campaign_id = %s AND e.provenance = 'extracted'
            GROUP BY e.id, n.spelling""",
        (campaign_id,),
    )
    seen: dict[tuple[str, str], int] = {}
    for r in seen_rows:
        seen[(r["id"], r["spelling"])] = int(r["sessions"])
        if int(r["as_word"]):
            seen[(r["id"], r["spelling"].lower())] = int(r["as_word"])
    return correction_targets(entities, seen)
