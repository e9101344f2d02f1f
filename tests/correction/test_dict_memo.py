"""`dict_memo`: a result is worked out once while kept, and the memo stays within its bound."""

from glyphoxa_pipelines.correction.dict_memo import dict_memo


def test_a_kept_result_is_not_worked_out_again_and_the_memo_is_emptied_when_full() -> None:
    calls: list[str] = []

    @dict_memo(3)
    def shout(word: str) -> str:
        """Upper case."""
        calls.append(word)
        return word.upper()

    assert [shout(w) for w in ("a", "b", "a", "c", "b")] == ["A", "B", "A", "C", "B"]
    assert calls == ["a", "b", "c"]  # each word worked out once
    assert shout("d") == "D"  # a fourth word: the full memo is emptied first
    assert len(shout.kept) == 1  # type: ignore[attr-defined]
    assert shout("a") == "A" and calls[-1] == "a"  # worked out again after the emptying
    assert shout.__doc__ == "Upper case."


def test_a_caller_given_memo_is_the_one_filled_and_read() -> None:
    # the walks read `CODES` and `PIECES` themselves: the memo they read must be the one filled
    kept: dict[str, int] = {}

    @dict_memo(10, kept)
    def size(word: str) -> int:
        return len(word)

    assert size("grog") == 4 and kept == {"grog": 4}
    kept["pike"] = 99  # a kept result is returned as kept, not worked out again
    assert size("pike") == 99
