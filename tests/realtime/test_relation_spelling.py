"""Relation types reach the store in one spelling whichever way they come in: the design writes
them upper case (LOCATED_AT), an LLM may too, a DM may write words."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from realtime.schemas import FactIn
from realtime.tools.args import SearchFactsArgs


@pytest.mark.parametrize("spelling", ["LOCATED_AT", "located_at", "Located at", "located-at"])
def test_tool_and_api_accept_any_spelling_of_a_relation(spelling: str) -> None:
    assert SearchFactsArgs(relation=spelling).relation == "located_at"
    assert FactIn(source="a", relation=spelling, target="b").relation == "located_at"


@pytest.mark.parametrize("bad", ["???", "", "1st_of"])
def test_a_relation_with_no_leading_letter_is_refused(bad: str) -> None:
    with pytest.raises(ValidationError):
        SearchFactsArgs(relation=bad)
    with pytest.raises(ValidationError):
        FactIn(source="a", relation=bad, target="b")
