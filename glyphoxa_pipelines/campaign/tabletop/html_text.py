"""HTML from tabletop bios, notes and journal pages, as the plain text an NPC prompt holds.

A real parser (stdlib `html.parser`), not a regex: tags split across attributes, entities
(`&amp;`), comments and `<script>` bodies are handled as a browser would. Block elements
become line breaks; Foundry's enricher links (`@UUID[Actor.x]{Label}`) become their label.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

_BLOCKS = frozenset(
    {"p", "div", "br", "li", "ul", "ol", "h1", "h2", "h3", "h4", "h5", "h6", "tr",
     "blockquote", "section", "article", "hr", "table", "pre"}
)
_SKIPPED = frozenset({"script", "style", "template", "head"})
_ENRICHER = re.compile(r"@\w+\[[^\]]*\](?:\{([^}]*)\})?")


class _TextCollector(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.skipping = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _SKIPPED:
            self.skipping += 1
        elif tag in _BLOCKS:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in _SKIPPED:
            self.skipping = max(0, self.skipping - 1)
        elif tag in _BLOCKS:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if not self.skipping:
            self.parts.append(data)


def html_to_text(html: str) -> str:
    """Plain text: words of a block on one line, blocks on their own lines, no blank runs."""
    collector = _TextCollector()
    collector.feed(html)
    collector.close()
    text = _ENRICHER.sub(lambda m: m.group(1) or "", "".join(collector.parts))
    lines = (re.sub(r"[ \t\r\f\v\xa0]+", " ", line).strip() for line in text.split("\n"))
    return "\n".join(line for line in lines if line)
