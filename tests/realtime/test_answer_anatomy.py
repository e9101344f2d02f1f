"""`bench/answer_anatomy.py`: a packed answer's characters split by part, summing to what the
model reads."""

from __future__ import annotations

from bench.answer_anatomy import anatomy
from realtime.session_search import GAP
from realtime.tools.results import reader_chars


def test_the_parts_of_a_result_sum_to_its_characters_as_sent() -> None:
    result = {"text": f'Ana: the "silver" key\n{GAP}\nBo: under the mill', "score": 0.57,
              "source": {"session_id": "s1", "when": "2024-01-01T00:00Z", "entry_ids": [3, 9]}}
    parts = anatomy(result)
    assert sum(parts.values()) == reader_chars(result)
    assert parts["words"] == len('the \\"silver\\" key') + len("under the mill")
    assert parts["speakers"] == len("Ana: ") + len("Bo: ")
    assert parts["line_breaks"] == 4 and parts["gap_lines"] == 1
    assert parts["entry_ids"] == len("[3, 9]") and parts["score"] == len("0.57")
    assert parts["keys"] == len('{"text": "", "score": , "source": {"session_id": , '
                                '"when": , "entry_ids": }}, ')
