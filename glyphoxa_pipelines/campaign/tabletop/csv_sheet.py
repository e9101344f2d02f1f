"""A generic CSV: `name`, `type`, `aliases`, `description`, `gm_notes`, then any column as an
attribute (`occupation`, `alignment`, ...).

Read with the stdlib `csv` module rather than pandas: its reader knows the physical line of
every row (a quoted cell may span lines), which is what an error must name. The dialect
(comma, semicolon, tab) is sniffed from the header; aliases split on `;` or `|`.
"""

from __future__ import annotations

import csv
import io

from glyphoxa_pipelines.campaign.tabletop.world import (
    ImportedWorld,
    TabletopFileError,
    WorldBuilder,
)

FORMAT = "csv"
_NOTES = ("gm_notes", "gmnotes", "dm_notes", "secret")


def read_csv(text: str, source: str) -> ImportedWorld:
    b = WorldBuilder(FORMAT, source)
    head = text.lstrip("\ufeff")
    try:
        dialect: type[csv.Dialect] | csv.Dialect = csv.Sniffer().sniff(
            head.split("\n", 1)[0], delimiters=",;\t"
        )
    except csv.Error:
        dialect = csv.excel
    reader = csv.reader(io.StringIO(head, newline=""), dialect)
    try:
        header = [h.strip().lower().replace(" ", "_") for h in next(reader, [])]
    except csv.Error as exc:
        raise TabletopFileError(f"{source}:1: {exc}") from None
    if "name" not in header or "type" not in header:
        raise TabletopFileError(f"{source}:1: the header needs 'name' and 'type' columns")
    dupes = {h for h in header if header.count(h) > 1}
    if dupes:
        raise TabletopFileError(f"{source}:1: columns named twice: {', '.join(sorted(dupes))}")
    start = reader.line_num  # a row begins on the line after the previous one ended
    try:
        for row in reader:
            line, start = start + 1, reader.line_num
            if not any(cell.strip() for cell in row):
                continue
            where = f":{line}"
            if len(row) != len(header):
                b.problem(where, f"{len(row)} cells, the header has {len(header)}")
                continue
            cells = {h: c.strip() for h, c in zip(header, row, strict=True)}
            aliases = [a for a in cells.pop("aliases", "").replace("|", ";").split(";")]
            notes = next((cells.pop(k) for k in _NOTES if k in cells), "")
            for k in _NOTES:
                cells.pop(k, None)
            b.entity(where, cells.pop("name"), cells.pop("type"), aliases=aliases,
                     description=cells.pop("description", ""), attributes=dict(cells),
                     dm_notes=notes)
    except csv.Error as exc:
        raise TabletopFileError(f"{source}:{reader.line_num}: {exc}") from None
    return b.finish()
