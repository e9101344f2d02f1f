"""A fact as a sentence: "<source> <relation words> <target>", one wording for every reader
(prompts, tool results, recaps, the demo), so the LLM sees facts phrased the same way
whichever path brought them."""

from __future__ import annotations

from glyphoxa_pipelines.memory.visibility import mark_secret


def relation_words(rel_type: str) -> str:
    """`lives_in` -> `lives in`."""
    return rel_type.replace("_", " ")


def fact_sentence(
    source_name: str, rel_type: str, target_name: str, *, secret: bool = False
) -> str:
    """The sentence for a fact; a secret one carries the "do not reveal" guard."""
    return mark_secret(f"{source_name} {relation_words(rel_type)} {target_name}", secret)
