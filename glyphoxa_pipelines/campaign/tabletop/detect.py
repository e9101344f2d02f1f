"""Which reader a file needs, from its content, so `campaign load FILE` takes any of them.

A JSON object with `characters` or `handouts` is a Roll20 export, one with `actors`,
`items`, `journal` or `scenes` a Foundry world; text whose first line has `name` and
`type` columns is a CSV; anything else is a campaign YAML file.
"""

from __future__ import annotations

import csv
from pathlib import Path

from glyphoxa_pipelines.campaign.input_file import InputFileError, read_input_text
from glyphoxa_pipelines.campaign.tabletop.csv_sheet import read_csv
from glyphoxa_pipelines.campaign.tabletop.foundry import read_foundry
from glyphoxa_pipelines.campaign.tabletop.json_file import parse_json_text
from glyphoxa_pipelines.campaign.tabletop.roll20 import read_roll20
from glyphoxa_pipelines.campaign.tabletop.world import ImportedWorld, TabletopFileError

FORMATS = ("foundry", "roll20", "csv")


def detect_format(text: str) -> str:
    """"foundry", "roll20", "csv" or "yaml"."""
    head = text.lstrip("\ufeff \t\r\n")
    if head.startswith("{"):
        try:
            data = parse_json_text(text, "<detect>")
        except TabletopFileError:
            return "yaml"  # not valid JSON: the YAML reader will say where it breaks
        if "characters" in data or "handouts" in data:
            return "roll20"
        if {"actors", "items", "journal", "scenes"} & data.keys():
            return "foundry"
        return "yaml"
    first = head.split("\n", 1)[0]
    try:
        cols = {c.strip().lower() for c in next(csv.reader([first], csv.Sniffer().sniff(
            first, delimiters=",;\t")))}
    except (csv.Error, StopIteration):
        return "yaml"
    return "csv" if {"name", "type"} <= cols else "yaml"


def read_world_text(text: str, source: str, fmt: str) -> ImportedWorld:
    if fmt == "csv":
        return read_csv(text, source)
    data = parse_json_text(text, source)
    if fmt == "foundry":
        return read_foundry(data, source)
    if fmt == "roll20":
        return read_roll20(data, source)
    raise TabletopFileError(f"{source}: unknown format {fmt!r}; one of {', '.join(FORMATS)}")


def read_world_file(path: str | Path, fmt: str | None = None) -> tuple[ImportedWorld, str]:
    """The world in `path` and the text it was read from (its hash names the batch)."""
    try:
        text = read_input_text(path)
    except InputFileError as exc:
        raise TabletopFileError(str(exc)) from None
    fmt = fmt or detect_format(text)
    if fmt == "yaml":
        raise TabletopFileError(
            f"{path}: not a Foundry world, a Roll20 export or a CSV with name and type columns"
        )
    return read_world_text(text, str(path), fmt), text
