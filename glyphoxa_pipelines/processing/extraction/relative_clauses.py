"""Whom a relative pronoun stands for: "Grog, who rules the caverns" is Grog's clause.

The parse hangs a relative clause ("relcl") on its noun, but the clause's subject is the
pronoun; a verb rule reading that clause needs the noun (or, for "X is the one that ...", the
copula's subject) to know who did it. Kept apart from `svo`, which only asks.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from glyphoxa_pipelines.processing.extraction.vocabulary import words

if TYPE_CHECKING:
    from spacy.tokens import Token

_RELATIVE = frozenset(words("who which that"))
_COPULAS = frozenset(words("be remain become"))


def relative_antecedent(token: Token) -> Token | None:
    """The noun a relative pronoun subject stands for: "Grog, who rules X" is Grog; "K'varn
    is the one that rules X" is K'varn (the "one" a copula says its subject is). Only the
    subject of a relative clause ("information that she found" is no one), only right after
    its noun's own phrase (`_next_to`), and not after a denial ("X is not the one that")."""
    if token.lower_ not in _RELATIVE or token.dep_ not in ("nsubj", "nsubjpass"):
        return None
    clause = token.head
    if clause.dep_ != "relcl" or clause.head is clause or not _next_to(clause.head, token):
        return None
    noun = clause.head
    if noun.lower_ == "one" and noun.dep_ == "attr" and noun.head.lemma_.lower() in _COPULAS:
        copula = noun.head
        if any(c.dep_ == "neg" for c in copula.children):
            return None
        return next((c for c in copula.children if c.dep_ == "nsubj"), None)
    return noun if noun.pos_ in ("NOUN", "PROPN", "PRON") else None


def _next_to(noun: Token, pronoun: Token) -> bool:
    """Only the noun's own words ("Lady Kima of Vord, who") or punctuation stand between a
    noun and its relative pronoun: the parser also hangs a clause said a sentence later on
    an earlier name ("Grog ... was kidnapped by the queen mage before she could be slain,
    who then also disintegrated ...")."""
    if noun.i >= pronoun.i:  # a misparse: a relative pronoun follows its noun
        return False
    clause = pronoun.head
    for t in pronoun.doc[noun.i + 1:pronoun.i]:
        if t.is_punct:
            continue
        if noun not in t.ancestors or clause in t.ancestors:
            return False
    return True
