"""The real-play bench's automatic gold (`bench/crd3_play.py`): a summary sentence finds the
run of turns holding its rare words, recaps and out-of-game headings are not questions, and a
sentence sharing too little with the play has no gold at all."""

from __future__ import annotations

from bench.crd3_play import GOLD_TURNS, align, summary_sentences

FILLER = [f"I roll a {n} on it, okay okay" for n in range(60)]


def test_align_finds_the_scene_of_the_rare_words() -> None:
    turns = list(FILLER)
    turns[40] = "Scanlan sings a song of rest for the party"
    turns[43] = "You find Foreman Herris near the mine entrance"
    turns[46] = "He tells you about goblins stitched together"
    where = align("Scanlan sings a song of rest, and they find Foreman Herris, who speaks "
                  "of stitched goblins.", turns)
    assert where is not None
    start, shared = where
    assert start <= 40 and start + GOLD_TURNS > 46
    assert shared >= 5


def test_align_gives_no_gold_without_shared_rare_words() -> None:
    assert align("The dragon attacks the city of Emon at dawn.", FILLER) is None
    assert align("anything", []) is None


def test_summary_sentences_leave_out_recaps_and_announcements() -> None:
    meta = {"Synopsis": [
        {"heading": "Announcements", "content": [{"content": " Matt thanks the sponsors."}]},
        {"heading": "Previously on Critical Role", "content": [{"content": "They left. Then."}]},
        {"heading": "Part I", "content": [
            {"sub-heading": "", "content": " The party enters the mine. Grog smashes a door.\n"
                                           " Vex finds tracks."}]},
    ]}
    assert summary_sentences(meta) == ["The party enters the mine.", "Grog smashes a door.",
                                       "Vex finds tracks."]
