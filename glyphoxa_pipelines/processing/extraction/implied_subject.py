"""Whose deed a verb with no subject of its own tells: the subject it borrows from its clause.

Narration and recorded introductions pack a person's history into participles and second
verbs: "Beaten and banished by his uncle Kevdak, Grog was left to die", "Kima, freed by
Clarota, walked out", "the party was hired to go into Kraghammer seeking Lady Kima". The
parse gives such a verb no subject; a reader takes the clause's. The rules, each the
grammar's own:

- a second verb ("swoops up and catches") has its first verb's subject, as that verb has it,
  but in its own voice: "Grog was beaten and left to die" shares the passive, "Grog can be
  found challenging taverns or accompanying Scanlan" is Grog's own doing (only a past
  participle can carry the first verb's passive);
- a verb the subject means or is made to do ("you use that to give", "was hired to go"): the
  subject of the verb before it; after an active verb whose object is the doer ("I ask Grog
  to pull") it borrows nothing;
- a past participle opening or closing the clause ("Exiled by Kevdak, Grog ...") tells what
  was done to the clause's subject: that subject, passive;
- a past participle on a name ("Kima, freed by Clarota") tells what was done to that name;
- a present participle ("..., seeking Lady Kima", "After killing Murghol, Grog ...") is the
  clause subject's own doing;
- a gerund right after an object pronoun ("lend support in me leaving Draconia") is that
  pronoun's doing, whatever the parse hung the pronoun on: English puts a gerund's own
  subject there, in the object's form.

The climb stops after a few steps: a long chain is more likely a misparse than a long deed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from glyphoxa_pipelines.processing.extraction.vocabulary import words

if TYPE_CHECKING:
    from spacy.tokens import Token

OBJECT_CONTROL = frozenset(words(
    "ask tell order command persuade convince want expect allow force help urge beg invite "
    "instruct encourage let make get need send hire pay charge task commission"
))
_MAX_STEPS = 3
_VERBS = ("VERB", "AUX")


def _own_subjects(verb: Token) -> list[tuple[Token, bool]]:
    out: list[tuple[Token, bool]] = []
    for child in verb.children:
        if child.dep_ in ("nsubj", "nsubjpass"):
            passive = child.dep_ == "nsubjpass"
            out += [(child, passive),
                    *((t, passive) for t in child.conjuncts if t.dep_ == "conj")]
    return out


_OBJECT_PRONOUNS = frozenset(words("me him her them us you"))


def _gerund_subject(verb: Token) -> Token | None:
    """The object pronoun said right before a gerund ("in me leaving Draconia"), when the
    parse made it another word's object rather than the gerund's own."""
    if verb.tag_ != "VBG" or verb.i == 0:
        return None
    before = verb.doc[verb.i - 1]
    if before.lower_ in _OBJECT_PRONOUNS and before.dep_ in ("pobj", "dobj") and (
            before.head is not verb):
        return before
    return None


def purpose_of_task(verb: Token) -> bool:
    """The errand a passive control verb sets, which the parse hangs as a purpose clause:
    "we were sent to find Lady Kima", "we've been charged to find Lady Kima"."""
    head = verb.head
    return (verb.dep_ == "advcl" and verb.tag_ == "VB" and head is not verb
            and head.lemma_.lower() in OBJECT_CONTROL
            and any(c.dep_ == "aux" and c.lower_ == "to" for c in verb.children)
            and any(c.dep_ == "nsubjpass" for c in head.children))


def implied_subjects(verb: Token, steps: int = _MAX_STEPS) -> list[tuple[Token, bool]]:
    """The (subject token, passive) pairs a verb without a subject of its own borrows; [] when
    the grammar gives it none. A verb with its own subject gets [] too (read it directly)."""
    if _own_subjects(verb) or steps <= 0:
        return []
    if (gerund_subject := _gerund_subject(verb)) is not None:
        return [(gerund_subject, False)]
    head = verb.head
    if head is verb:
        return []
    participle = verb.tag_ in ("VBN", "VBG")
    if verb.dep_ == "acl" and verb.tag_ == "VBN" and head.pos_ in ("NOUN", "PROPN"):
        return [(head, True)]  # "Kima, freed by Clarota"
    if head.pos_ not in _VERBS and not (verb.dep_ == "pcomp" and head.dep_ == "prep"):
        return []
    if verb.dep_ == "pcomp":  # "After killing Murghol, Grog left": the preposition's verb
        head = head.head
        if head.pos_ not in _VERBS or verb.tag_ != "VBG":
            return []
    elif verb.dep_ == "conj":
        pass
    elif verb.dep_ == "xcomp" or purpose_of_task(verb):
        head_subjects = _own_subjects(head) or implied_subjects(head, steps - 1)
        control = head.lemma_.lower() in OBJECT_CONTROL
        if control:  # "was hired to go": the one hired goes; "asked Grog to go": not said
            return [(t, False) for t, passive in head_subjects if passive]
        return [(t, False) for t, passive in head_subjects if not passive]
    elif not (verb.dep_ == "advcl" and participle):
        return []
    subjects = _own_subjects(head) or implied_subjects(head, steps - 1)
    if verb.dep_ == "conj":  # "swoops up and catches": the first verb's subject, own voice
        return [(t, passive and verb.tag_ == "VBN") for t, passive in subjects]
    return [(t, verb.tag_ == "VBN") for t, _ in subjects]
