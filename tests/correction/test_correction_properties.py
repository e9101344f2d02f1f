"""Property tests: text with no near-name comes back byte-identical; results are consistent."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rapidfuzz.distance import JaroWinkler
from wordfreq import top_n_list

from glyphoxa_pipelines.correction import NameIndex, apply_corrections, correct, normalize

NAMES = [
    "Eldrinax",
    "Ironhold",
    "Tower of Whispers",
    ("Vex'ahlia", ["Vex"]),
    "Grimjaw",
    "Kraghammer",
    "Allura Vysoren",
    "Zephyrine Moonwhisper",
    "Thalindor",
    "K'Varn",
]
INDEX = NameIndex(NAMES)
NAME_KEYS = [f.joined for f in INDEX.forms] + [w for f in INDEX.forms for w in f.words]


def _near_a_name(word: str) -> bool:
    key = normalize(word)
    return any(
        key in name or name in key or JaroWinkler.similarity(key, name) >= 0.75
        for name in NAME_KEYS
    )


# Ordinary English words that are not pieces of, or close to, any known name.
WORDS = [w for w in top_n_list("en", 3000) if w.isalpha() and not _near_a_name(w)]
SEPARATORS = st.sampled_from([" ", " ", " ", "  ", ", ", ". ", "\n", "\t", "! ", "? ", " - "])

ordinary_text = st.lists(
    st.tuples(
        st.sampled_from(WORDS),
        st.sampled_from(["lower", "title", "upper"]),
        SEPARATORS,
    ),
    max_size=40,
).map(
    lambda parts: "".join(
        (w.title() if case == "title" else w.upper() if case == "upper" else w) + sep
        for w, case, sep in parts
    )
)

PROPERTY_SETTINGS = settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


@PROPERTY_SETTINGS
@given(ordinary_text)
def test_text_without_near_names_is_returned_byte_identical(text: str) -> None:
    result = correct(text, INDEX)
    assert result.text == text
    assert result.raw_text == text
    assert result.corrections == []


@PROPERTY_SETTINGS
@given(
    st.text(
        alphabet=st.characters(
            blacklist_categories=("Cs",),
            blacklist_characters="",
        ),
        max_size=200,
    )
)
def test_arbitrary_unicode_never_crashes_and_stays_consistent(text: str) -> None:
    result = correct(text, INDEX)
    assert result.raw_text == text
    assert apply_corrections(text, result.corrections) == result.text
    previous_end = -1
    for c in result.corrections:
        assert c.start >= previous_end
        assert text[c.start : c.end] == c.original
        assert c.replacement != c.original
        previous_end = c.end


@PROPERTY_SETTINGS
@given(st.text(alphabet="0123456789 .,;:!?-_()[]{}\n\t\"'#@/+*=%$€£¥🙂🐉", max_size=200))
def test_text_without_letters_is_returned_byte_identical(text: str) -> None:
    assert correct(text, INDEX).text == text


@PROPERTY_SETTINGS
@given(ordinary_text, ordinary_text)
def test_a_misheard_name_is_fixed_and_the_rest_kept(before: str, after: str) -> None:
    text = f"{before} elder nacks {after}"
    result = correct(text, INDEX)
    assert result.text == f"{before} Eldrinax {after}"
    assert [c.original for c in result.corrections] == ["elder nacks"]
