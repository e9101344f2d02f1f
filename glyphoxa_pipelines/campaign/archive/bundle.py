"""The archive file: a gzip tar of `manifest.json`, one JSON-lines member per table and the
recaps' audio files.

The manifest names the format and its version, the schema version (last migration) the rows
were read under, and every member with its size, row count and SHA-256. Reading never
extracts to disk: only the members the manifest names, of the kinds it names, are read,
each bounded by size and checked against its checksum, so a corrupt, truncated, foreign or
hostile file is refused before anything is written.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
import tarfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from glyphoxa_pipelines.campaign.archive.tables import TABLE_NAMES

FORMAT = "glyphoxa-campaign-archive"
VERSION = 1
MAX_MANIFEST_BYTES = 1024 * 1024
MAX_MEMBER_BYTES = 2 * 1024**3  # one table's rows; a campaign of 50 long sessions is ~1 GB
MAX_MEMBERS = len(TABLE_NAMES) + 10_000  # tables plus recap audio files
_AUDIO = re.compile(r"^audio/[A-Za-z0-9][A-Za-z0-9_.:-]*$")


class ArchiveError(ValueError):
    """The archive cannot be read or does not fit this home; the message names the member."""


@dataclass(slots=True)
class Bundle:
    """What an archive holds: its manifest and members (name -> bytes)."""

    manifest: dict[str, Any]
    members: dict[str, bytes] = field(default_factory=dict)

    def rows(self, table: str) -> list[dict[str, Any]]:
        name = f"tables/{table}.jsonl"
        try:
            text = self.members.get(name, b"").decode()
        except UnicodeDecodeError:
            raise ArchiveError(f"{name}: not UTF-8 text") from None
        out = []
        for n, line in enumerate(text.splitlines(), 1):
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ArchiveError(f"{name}:{n}: invalid JSON: {exc.msg}") from None
            if not isinstance(row, dict):
                raise ArchiveError(f"{name}:{n}: expected a JSON object")
            out.append(row)
        return out


def table_member(rows: list[dict[str, Any]]) -> bytes:
    return "".join(json.dumps(r, sort_keys=True, ensure_ascii=False) + "\n" for r in rows).encode()


def write_bundle(path: Path, manifest: dict[str, Any], members: dict[str, bytes]) -> None:
    """Write atomically: a half-written archive never takes the name."""
    described = dict(manifest, format=FORMAT, version=VERSION, members={
        name: {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}
        for name, data in sorted(members.items())
    })
    tmp = path.with_name(path.name + ".partial")
    with tarfile.open(tmp, "w:gz") as tar:
        for name, data in [("manifest.json", json.dumps(described, indent=1).encode()),
                           *sorted(members.items())]:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mode = 0o644
            tar.addfile(info, io.BytesIO(data))
    tmp.replace(path)


def _read_member(tar: tarfile.TarFile, info: tarfile.TarInfo, limit: int) -> bytes:
    if not info.isfile():
        raise ArchiveError(f"{info.name}: not a regular file")
    if info.size > limit:
        raise ArchiveError(f"{info.name}: {info.size:,} bytes, the limit is {limit:,}")
    f = tar.extractfile(info)
    assert f is not None  # a regular file always has a stream
    return f.read(limit + 1)


def read_bundle(path: str | Path) -> Bundle:
    source = str(path)
    try:
        with tarfile.open(path, "r:gz") as tar:
            infos: dict[str, tarfile.TarInfo] = {}
            for info in tar:
                if len(infos) >= MAX_MEMBERS:
                    raise ArchiveError(f"{source}: more than {MAX_MEMBERS:,} members")
                if info.name in infos:
                    raise ArchiveError(f"{source}: member {info.name} appears twice")
                infos[info.name] = info
            if "manifest.json" not in infos:
                raise ArchiveError(f"{source}: no manifest.json: not a Glyphoxa campaign archive")
            manifest = _manifest(_read_member(tar, infos["manifest.json"], MAX_MANIFEST_BYTES))
            listed: dict[str, Any] = manifest["members"]
            unknown = sorted(set(infos) - set(listed) - {"manifest.json"})
            if unknown:
                raise ArchiveError(f"{source}: member {unknown[0]} is not in the manifest")
            bundle = Bundle(manifest)
            for name, meta in sorted(listed.items()):
                if not (name in {f"tables/{t}.jsonl" for t in TABLE_NAMES} or _AUDIO.match(name)):
                    raise ArchiveError(f"{source}: manifest names an unknown member {name!r}")
                if name not in infos:
                    raise ArchiveError(f"{source}: member {name} is missing")
                data = _read_member(tar, infos[name], MAX_MEMBER_BYTES)
                if len(data) != meta.get("bytes") or (
                    hashlib.sha256(data).hexdigest() != meta.get("sha256")
                ):
                    raise ArchiveError(f"{source}: member {name} is corrupt (checksum mismatch)")
                bundle.members[name] = data
    except (tarfile.TarError, EOFError, OSError, UnicodeDecodeError) as exc:
        raise ArchiveError(f"{source}: not a readable gzip tar archive ({exc})") from None
    return bundle


def _manifest(data: bytes) -> dict[str, Any]:
    try:
        manifest = json.loads(data)
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise ArchiveError("manifest.json: not JSON") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise ArchiveError("manifest.json: not a Glyphoxa campaign archive")
    if manifest.get("version") != VERSION:
        raise ArchiveError(
            f"manifest.json: archive format version {manifest.get('version')!r}; "
            f"this Glyphoxa reads version {VERSION}"
        )
    if not isinstance(manifest.get("members"), dict) or not isinstance(
        manifest.get("campaign"), str
    ):
        raise ArchiveError("manifest.json: members or campaign missing")
    return manifest
