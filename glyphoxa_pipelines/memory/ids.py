"""Ids made from display names: entity ids, campaign ids, imported session ids.

One rule for every id a name becomes, because ids are stored and compared: a campaign file's
entity ids are matched on every reload, session ids are Dagster partition keys, and an
extracted entity's id must be the one a DM would type. Apostrophes are spelling, not word
breaks ("Vex'ahlia" -> "vexahlia", as a DM writes it), accents fold to ASCII.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata


def slugify(name: str) -> str:
    """Entity / campaign / session id from a display name: "Vex'ahlia" -> "vexahlia", "Tower
    of X" -> "tower-of-x". Stable, ASCII, lowercase; a name with no ASCII letter or digit gets
    a short hash, so two such names never share an id."""
    norm = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode()
    norm = re.sub(r"['’`]", "", norm.lower())
    slug = re.sub(r"[^a-z0-9]+", "-", norm).strip("-")
    return slug or "x" + hashlib.sha1(name.encode()).hexdigest()[:8]
