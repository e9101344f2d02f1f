"""The offline extractor's reading of the table: who plays whom, what is table talk, and the
facts the dependency parse reads. Pure functions over plain entries (no database)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from glyphoxa_pipelines.memory.models import Entity, Entry
from glyphoxa_pipelines.processing.extraction import extract_knowledge
from glyphoxa_pipelines.processing.extraction.characters import read_cast

START = datetime(2026, 3, 1, 19, 0, tzinfo=UTC)


def entries(lines: list[tuple[str, str]]) -> list[Entry]:
    return [
        Entry(
            id=n + 1, campaign_id="c1", session_id="s1", idempotency_key=f"k{n}",
            speaker_id=s.lower(), speaker_name=s, speaker_role="dm" if s == "MATT" else "player",
            raw_text=t, text=t, npc_id=None, spoken_at=START + timedelta(seconds=10 * n),
            duration_s=5.0,
        )
        for n, (s, t) in enumerate(lines)
    ]


TABLE = [
    ("MATT", "You enter the dwarven city of Kraghammer. The guards of Kraghammer watch you."),
    ("LAURA", "Grog, put the axe away."),
    ("TRAVIS", "Fine, fine."),
    ("MATT", "Clarota says, (raspy voice) \"Stay close to me.\""),
    ("LAURA", "Clarota, are you hurt?"),
    ("TRAVIS", "He looks hurt."),
    ("SAM", "Grog, lift the gate!"),
    ("TRAVIS", "I lift it."),
    ("MATT", "You watch as Grog lifts the gate. Everyone cheers for Grog."),
    ("MATT", "Clarota nods. Clarota walks ahead into Emberhold, the city of Emberhold."),
    ("MATT", "Thank you David Norris for the chicken! Check out David Norris on the chat."),
    ("SAM", "Oof!"),
    ("MATT", "Oof! The stone door of Emberhold grinds open. King Murghol rules Emberhold."),
    ("LIAM", "Oof, that's heavy."),
    ("MATT", "King Murghol rules Emberhold with an iron fist."),
]


def test_a_name_the_table_calls_and_one_player_answers_is_their_character() -> None:
    cast = read_cast(entries(TABLE), excluded={"matt", "laura", "travis", "sam", "liam"})
    assert cast.played_by == {"grog": "TRAVIS"}  # Clarota is voiced by the DM: an NPC
    assert cast.character_of("TRAVIS") == "grog"


def test_a_player_introducing_their_character_names_it() -> None:
    intro = "I am Tiberius Stormwind. I hail from a town called Ty'rex. " + "I study. " * 150
    cast = read_cast(entries([("ORION", intro)]), excluded={"orion"})
    assert cast.played_by == {"tiberius stormwind": "ORION"}


def test_table_talk_and_junk_never_become_entities() -> None:
    result = extract_knowledge(entries(TABLE), [])
    by_name = {e.name: e.type for e in result.entities}
    assert by_name["Emberhold"] == "location"
    assert by_name["Kraghammer"] == "location"
    assert by_name["Grog"] == "player"
    assert by_name["Murghol"] == "npc"
    assert not {"David Norris", "Norris", "Oof", "Laura", "Travis"} & set(by_name)
    names = {e.id: e.name for e in result.entities}
    facts = {(names[r.source_id], r.rel_type, names[r.target_id]) for r in result.relationships}
    assert ("Murghol", "leader_of", "Emberhold") in facts


def test_the_dependency_parse_reads_a_fact_the_surface_patterns_miss() -> None:
    graph = [
        Entity("c1", "clarota", "npc", "Clarota"),
        Entity("c1", "kima", "npc", "Lady Kima", ["Kima"]),
        Entity("c1", "emberhold", "location", "Emberhold"),
    ]
    lines = [
        ("MATT", "In the dark cell, Clarota quietly frees Kima from her chains."),
        ("MATT", "Kima and Clarota then travel into Emberhold together."),
    ]
    result = extract_knowledge(entries(lines), graph)
    facts = {(r.source_id, r.rel_type, r.target_id): r for r in result.relationships}
    rescued = facts[("clarota", "rescued", "kima")]
    assert rescued.attributes["method"] == "dependency"
    assert rescued.evidence.startswith("In the dark cell")
    assert ("kima", "travelled_to", "emberhold") in facts
    assert ("clarota", "travelled_to", "emberhold") in facts


def test_a_players_i_is_their_character() -> None:
    graph = [
        Entity("c1", "grog", "player", "Grog", attributes={"played_by": "TRAVIS"}),
        Entity("c1", "kevdak", "npc", "Kevdak"),
    ]
    lines = [
        ("LAURA", "Grog, what now?"),
        ("TRAVIS", "Nothing."),
        ("SAM", "Grog, look!"),
        ("TRAVIS", "I attack Kevdak with my axe."),
    ]
    result = extract_knowledge(entries(lines), graph)
    fact = next(r for r in result.relationships if r.rel_type == "attacked")
    assert (fact.source_id, fact.target_id) == ("grog", "kevdak")
    assert fact.attributes["coreference"] == "speaker"
    assert fact.confidence < 0.7 and fact.status == "pending"  # coreference: DM review


def test_narrations_she_is_the_one_person_last_named_and_goes_to_review() -> None:
    graph = [
        Entity("c1", "pike", "npc", "Pike"),
        Entity("c1", "grog", "npc", "Grog"),
        Entity("c1", "wilhand", "npc", "Wilhand"),
    ]
    lines = [
        ("MATT", "Pike walks into the old chapel. She heals Grog with a prayer."),
        # two people named: "he" is ambiguous, so nothing is read through it
        ("MATT", "Wilhand meets Pike at the gate. He heals Grog."),
        # a new turn starts with no antecedent
        ("MATT", "She heals Wilhand."),
    ]
    result = extract_knowledge(entries(lines), graph)
    healed = [r for r in result.relationships if r.rel_type == "healed"]
    assert [(r.source_id, r.target_id) for r in healed] == [("pike", "grog")]
    assert healed[0].attributes["coreference"] == "narration"
    assert healed[0].status == "pending"  # read through a pronoun: the DM reviews it


def test_third_person_antecedents_follow_one_named_person_per_turn() -> None:
    from glyphoxa_pipelines.processing.extraction.coreference import third_person_antecedents
    from glyphoxa_pipelines.processing.extraction.name_spans import session_sentences

    people = {
        "pike": Entity("c1", "pike", "npc", "Pike"),
        "grog": Entity("c1", "grog", "npc", "Grog"),
        "vord": Entity("c1", "vord", "location", "Vord"),
    }
    turns = entries([
        ("MATT", "Pike rides to Vord. She rests. Pike and Grog argue. He sulks."),
        ("MATT", "She sleeps."),
    ])
    sentences = session_sentences(turns)
    assert len(sentences) == 5
    spans = [
        [(0, 4, "pike"), (13, 17, "vord")],  # a place does not make "she" ambiguous
        [],
        [(0, 4, "pike"), (9, 13, "grog")],
        [],
        [],
    ]
    assert third_person_antecedents(sentences, spans, people) == [
        None, "pike", "pike", None, None,
    ]


def test_a_god_named_by_its_form_is_a_concept_not_a_creature() -> None:
    lines = [
        ("MATT", "Kima follows Bahamut, the Platinum Dragon of justice."),
        ("MATT", "Above the camp you see the symbol of the Platinum Dragon carved in stone."),
        ("MATT", "The Platinum Dragon watches over the faithful of Kraghammer."),
    ]
    result = extract_knowledge(entries(lines), [])
    types = {e.name: e.type for e in result.entities}
    # the form said beside the name is the god's alias (`epithets`), with the god's type
    assert types.get("Bahamut") == "concept" and "Platinum Dragon" not in types
    assert [e.aliases for e in result.entities if e.name == "Bahamut"] == [["Platinum Dragon"]]
    lines[0] = ("MATT", "Kima follows the paladin's god of justice.")  # no name beside it
    types = {e.name: e.type for e in extract_knowledge(entries(lines), []).entities}
    assert types.get("Platinum Dragon") == "concept"


def test_a_player_who_says_whom_they_play_gets_the_character_without_answers() -> None:
    lines = [
        ("LAURA", "I'm playing Vex'ahlia tonight, the ranger."),
        ("MATT", "Vex'ahlia steps into the tavern of Kraghammer. The dwarves stare."),
        ("MATT", "Vex'ahlia draws her bow. Vex'ahlia takes aim at the goblin."),
        ("MATT", "The goblin flees from Vex'ahlia into the mines."),
    ]
    result = extract_knowledge(entries(lines), [])
    vex = next(e for e in result.entities if e.name == "Vex'ahlia")
    assert vex.type == "player" and vex.attributes.get("played_by") == "LAURA"


def test_a_name_handled_as_a_weapon_is_an_item() -> None:
    lines = [
        ("MATT", "You pull out a bullet and load it back into Bad News."),
        ("TALIESIN", "I fire."),
        ("MATT", "The duergar was shot from the Bad News and falls."),
        ("MATT", "Bad News roars again."),
    ]
    by_name = {e.name: e.type for e in extract_knowledge(entries(lines), []).entities}
    assert by_name.get("Bad News") == "item"
