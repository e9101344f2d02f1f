"""A small campaign's names for the correction tests that lay out scenes and windows: one-
and several-word names, apostrophes, a "de" and an "of", twins that sound alike."""

from __future__ import annotations

PARTY_NAMES: list[str] = [
    "Keyleth",
    "Vex'ahlia",
    "Vax'ildan",
    "Scanlan Shorthalt",
    "Trinket",
    "Grog Strongjaw",
    "Percival de Rolo",
    "Clarota",
    "Thessa Morn",
    "Brannoc",
    "Vrel",
    "Kima of Vord",
]
