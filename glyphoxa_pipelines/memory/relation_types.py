"""Relation and entity type names as DMs write them, in the one form the store holds.

The design writes relation types upper case (`LOCATED_AT`) and allows custom free-text ones
("sworn enemy of"); the store, the extractors and the memory tools all hold and match
`rel_type` as lower snake case (a CHECK constraint says `^[a-z][a-z0-9_]*$`). Every way in
(campaign files, tabletop imports, the HTTP API, the memory tools' `relation` argument)
normalizes here, so `LOCATED_AT`, `located_at` and
"Located at" are one type and a reload never sees a change that is only spelling.
"""

from __future__ import annotations

import re
import unicodedata

from glyphoxa_pipelines.memory.limits import MAX_NAME_CHARS

# The design's relation types, in its order; any other text is a custom type.
DESIGN_RELATION_TYPES: tuple[str, ...] = (
    "knows",
    "located_at",
    "owns",
    "member_of",
    "allied_with",
    "hostile_to",
    "participated_in",
    "quest_giver",
    "child_of",
    "employed_by",
)


def normalize_type_name(text: str) -> str:
    """`LOCATED_AT` / "Located at" / "quest-giver" -> `located_at` / `quest_giver`.

    Raises ValueError when nothing usable is left (no ASCII letter first) or it is too long;
    the message is plain text, safe to print through rich (no square brackets)."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    ascii_text = re.sub(r"['’`]", "", ascii_text.lower())
    norm = re.sub(r"[^a-z0-9]+", "_", ascii_text).strip("_")
    if not norm or not norm[0].isalpha():
        raise ValueError(
            f"type {text!r} must start with a letter (letters, digits and spaces; "
            "stored lower case with underscores, e.g. LOCATED_AT as located_at)"
        )
    if len(norm) > MAX_NAME_CHARS:
        raise ValueError(f"type is {len(norm)} characters; the limit is {MAX_NAME_CHARS}")
    return norm


def normalize_entity_type(text: str) -> str:
    """An entity type ("NPC", "Player Character") in the stored form; the store's entity
    types hold letters and underscores only, so a digit is refused here, by name."""
    norm = normalize_type_name(text)
    if any(c.isdigit() for c in norm):
        raise ValueError(f"entity type {text!r} must be letters (and spaces or underscores)")
    return norm


def relation_type(value: str) -> str:
    """A pydantic `BeforeValidator`: a relation type in any spelling, as stored."""
    return normalize_type_name(value) if isinstance(value, str) else value
