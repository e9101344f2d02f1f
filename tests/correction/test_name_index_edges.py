"""The index's per-code sizes of multi-word names, which the window walk tests instead of
`by_edge`'s code keys: they must say exactly what those keys say, or the walk would skip a
window `best_name` would have matched (or score one it need not)."""

from __future__ import annotations

from glyphoxa_pipelines.correction import NameIndex, correct

ENTITIES = [
    "Allura Vysoren",
    "Iron Hearth Tavern",
    "Tower of Whispers",
    "Elder Naxx",
    "Grimjaw",
    ("Vex'ahlia", ["Vex"]),
    "Lady Kima of Vord",
]


def test_edge_code_sizes_say_what_by_edge_code_keys_say() -> None:
    index = NameIndex(ENTITIES)
    from_keys = {(key[1][2:], key[0]) for key in index.by_edge if key[1].startswith("c:")}
    from_sizes = {(code, n) for code, sizes in index.edge_code_sizes.items() for n in sizes}
    assert from_keys  # multi-word names were indexed by their edge words' codes
    assert from_sizes == from_keys


def test_multi_word_name_heard_with_one_edge_word_respelled_is_still_found() -> None:
    # the walk's pre-checks (edge words, their codes, the joined code) must let the window
    # through to the scoring
    result = correct("we met Allura Vysorin at the gate", NameIndex(ENTITIES))
    assert result.text == "we met Allura Vysoren at the gate"
