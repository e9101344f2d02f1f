"""Whom the DM's "you" means (`extraction/addressee`) and the facts read through it; the
party's characters found by the company they keep. Pure functions over plain entries."""

from __future__ import annotations

from glyphoxa_pipelines.memory.models import Entity
from glyphoxa_pipelines.processing.extraction import extract_knowledge
from glyphoxa_pipelines.processing.extraction.addressee import dm_addressees
from glyphoxa_pipelines.processing.extraction.characters import read_cast
from glyphoxa_pipelines.processing.extraction.name_spans import session_sentences
from tests.processing.test_extraction_nlp import entries

GRAPH = [
    Entity("c1", "grog", "player", "Grog"),
    Entity("c1", "vex", "player", "Vex'ahlia", ["Vex"]),
    Entity("c1", "kima", "npc", "Lady Kima", ["Kima"]),
    Entity("c1", "emberhold", "location", "Emberhold"),
]
# the table establishes who plays whom: a name called out, its player answers
CALLS = [
    ("SAM", "Grog, what now?"),
    ("TRAVIS", "Nothing."),
    ("SAM", "Grog, look!"),
    ("TRAVIS", "What?"),
    ("SAM", "Vex, wait."),
    ("LAURA", "Okay."),
    ("SAM", "Vex, come on."),
    ("LAURA", "Fine."),
]


def facts(result: object) -> dict[tuple[str, str, str], object]:
    return {(r.source_id, r.rel_type, r.target_id): r for r in result.relationships}


def test_a_character_the_dm_calls_by_name_is_you_and_goes_to_canon() -> None:
    lines = [*CALLS, ("LAURA", "I look around."),
             ("MATT", "Grog, you rush into the cell and rescue Kima from her chains.")]
    found = facts(extract_knowledge(entries(lines), GRAPH))
    fact = found[("grog", "rescued", "kima")]  # not Vex'ahlia, whose player spoke last
    assert fact.attributes["coreference"] == "vocative"
    assert fact.status == "canon"
    assert not any(k[0] == "vex" for k in found)


def test_the_last_player_to_speak_is_you_but_only_for_review() -> None:
    lines = [*CALLS, ("LAURA", "I run to her."), ("MATT", "You free Kima from the chains.")]
    fact = facts(extract_knowledge(entries(lines), GRAPH))[("vex", "rescued", "kima")]
    assert fact.attributes["coreference"] == "reply"
    assert fact.confidence < 0.7 and fact.status == "pending"


def test_you_guys_is_the_party_never_the_last_speaker() -> None:
    lines = [*CALLS, ("LAURA", "Let's go."), ("MATT", "You guys enter Emberhold.")]
    assert not [k for k in facts(extract_knowledge(entries(lines), GRAPH))
                if k[1] == "travelled_to"]
    party = Entity("c1", "vox", "faction", "Vox Machina", attributes={"party": True})
    fact = facts(extract_knowledge(entries(lines), [*GRAPH, party]))[
        ("vox", "travelled_to", "emberhold")]
    assert fact.attributes["coreference"] == "party" and fact.status == "pending"


def test_options_and_questions_are_no_deeds() -> None:
    lines = [*CALLS, ("LAURA", "Hm."),
             ("MATT", "Vex, you can rescue Kima now. Do you attack Kima? If you free Kima, "
                      "she runs.")]
    assert not facts(extract_knowledge(entries(lines), GRAPH))


def test_a_name_in_a_list_is_not_called_out() -> None:
    lines = [("TRAVIS", "I wait."),
             ("MATT", "At the edge, you see Grog, you see Vex, both emerge."),
             ("MATT", "You also note specifically, Vex, that the door is open.")]
    es = entries(lines)
    sentences = session_sentences(es)
    spans = [[(s.text.index(n), s.text.index(n) + len(n), i)
              for n, i in (("Grog", "grog"), ("Vex", "vex")) if n in s.text]
             for s in sentences]
    cast = read_cast(entries(CALLS), excluded={"sam", "travis", "laura"})
    yous = dm_addressees(es, sentences, spans, cast, {e.id: e for e in GRAPH})
    assert [(y.entity, y.reading) for y in yous] == [
        (None, None),  # a player's turn
        ("grog", "reply"),  # TRAVIS spoke last; "Grog, you see" is a list, not a call
        ("vex", "vocative"),
    ]


def test_a_common_noun_the_sentence_names_stands_for_the_name() -> None:
    graph = [*GRAPH, Entity("c1", "tyrex", "location", "Ty'rex")]
    lines = [("MATT", "Long ago, Kima travelled to a town called Ty'rex."),
             ("MATT", "Kima lived in the ancient castle of Emberhold.")]
    found = facts(extract_knowledge(entries(lines), graph))
    assert ("kima", "travelled_to", "tyrex") in found
    assert ("kima", "lives_in", "emberhold") in found


def test_names_said_with_the_partys_characters_are_characters_too() -> None:
    lines = [*CALLS,
             *[("LIAM", f"Line {n}.") for n in range(30)],
             ("LAURA", "So Grog and Vax are going over."),
             ("SAM", "Vax and Vex'ahlia, then."),
             ("MATT", "Kima and Grog wait."),  # once only: an NPC by their side
             ]
    cast = read_cast(entries(lines), excluded={"sam", "travis", "laura", "liam", "matt"})
    assert cast.unplaced == frozenset({"vax"})
    result = extract_knowledge(entries([*lines, ("MATT", "Vax, Kima and Grog leave. Vax "
                                                          "waves.")]), [])
    assert {e.name: e.type for e in result.entities}.get("Vax") == "player"


def test_a_companion_the_dm_voices_is_an_npc_not_a_seat() -> None:
    lines = [*CALLS,
             *[("LIAM", f"Line {n}.") for n in range(30)],
             ("LAURA", "So Grog and Kima are going over."),
             ("SAM", "Kima and Vex, then."),
             ("MATT", 'However, Kima, with a grim look, grabs him and says, "Where is it?"'),
             ]
    cast = read_cast(entries(lines), excluded={"sam", "travis", "laura", "liam", "matt"})
    assert cast.unplaced == frozenset()


def test_a_task_the_dm_tells_is_a_quest_given_a_players_plan_is_not() -> None:
    lines = [*CALLS, ("LAURA", "Who are you?"),
             ("MATT", "Vex, you look up. Lady Kima asks you to find the hammer of her order."),
             ("LAURA", "I ask Grog to lift the gate.")]
    found = facts(extract_knowledge(entries(lines), GRAPH))
    assert found[("kima", "quest_giver", "vex")].attributes["coreference"] == "vocative"
    assert not [k for k in found if k[0] == "vex"]


def test_two_guesses_make_no_fact_and_a_gift_names_its_thing() -> None:
    guessed = [*CALLS, ("LAURA", "Hm."), ("MATT", "Grog stumbles. You strike him hard.")]
    assert not facts(extract_knowledge(entries(guessed), GRAPH))  # "you" and "him" both read
    nod = [*CALLS, ("LAURA", "Hm."), ("MATT", "Grog, you give a nod to Kima.")]
    assert not facts(extract_knowledge(entries(nod), GRAPH))
    gift = [*CALLS, ("LAURA", "Hm."), ("MATT", "Grog, you give the gauntlet to Kima.")]
    assert ("grog", "gave_to", "kima") in facts(extract_knowledge(entries(gift), GRAPH))


def test_you_after_several_players_is_the_party_after_one_that_player() -> None:
    party = Entity("c1", "vox", "faction", "Vox Machina", attributes={"party": True})
    several = [*CALLS, ("MATT", "Well?"), ("TRAVIS", "I go first."), ("LAURA", "Wait for me!"),
               ("MATT", "You enter Emberhold.")]
    found = facts(extract_knowledge(entries(several), [*GRAPH, party]))
    fact = found[("vox", "travelled_to", "emberhold")]
    assert fact.attributes["coreference"] == "party" and fact.status == "pending"
    assert not [k for k in found if k[0] in ("grog", "vex") and k[1] == "travelled_to"]
    # near misses: one player spoke (twice), or the last one declared an action the DM rules
    # on ("I walk up and ..."): "you" is that player's character, not the party
    for last in ([("LAURA", "Let's go."), ("LAURA", "Through the door.")],
                 [("TRAVIS", "Hurry up."), ("LAURA", "I walk in first.")]):
        one = [*CALLS, ("MATT", "Well?"), *last, ("MATT", "You enter Emberhold.")]
        found = facts(extract_knowledge(entries(one), [*GRAPH, party]))
        assert ("vex", "travelled_to", "emberhold") in found
        assert ("vox", "travelled_to", "emberhold") not in found


def test_a_reaction_between_two_dm_turns_to_the_party_leaves_you_the_party() -> None:
    party = Entity("c1", "vox", "faction", "Vox Machina", attributes={"party": True})
    story = ("MATT", "You guys managed to survive the fight.")
    lines = [*CALLS, story, ("TRAVIS", "Barely."), ("MATT", "You then entered Emberhold.")]
    found = facts(extract_knowledge(entries(lines), [*GRAPH, party]))
    assert found[("vox", "travelled_to", "emberhold")].attributes["coreference"] == "party"
    assert ("grog", "travelled_to", "emberhold") not in found
    # near misses: a declared action or a question between is a turn the DM answers
    for between in (("TRAVIS", "I search the bodies."), ("TRAVIS", "Wait, where?")):
        lines = [*CALLS, story, between, ("MATT", "You then entered Emberhold.")]
        found = facts(extract_knowledge(entries(lines), [*GRAPH, party]))
        assert ("grog", "travelled_to", "emberhold") in found, between
        assert ("vox", "travelled_to", "emberhold") not in found, between
