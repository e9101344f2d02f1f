"""Read a file the operator named (campaign YAML, transcript) as bounded UTF-8 text.

The name comes from a command line, so it may be anything: a directory, `/dev/zero`, a FIFO,
a name with a NUL, a 100 MB file. Each is refused here with a message naming the file, before
a parser or the database sees it; a NUL inside the text is refused with its line, since
PostgreSQL text cannot hold one.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from glyphoxa_pipelines.memory.limits import MAX_FILE_BYTES


class InputFileError(ValueError):
    """The file cannot be read as input; `line` is set when the problem is inside it."""

    def __init__(self, source: str, problem: str, line: int | None = None) -> None:
        self.source = source
        self.problem = problem
        self.line = line
        where = f"{source}:{line}" if line is not None else source
        super().__init__(f"{where}: {problem}")


def read_input_text(
    path: str | Path, *, max_bytes: int = MAX_FILE_BYTES, encoding: str = "utf-8"
) -> str:
    """The whole file as text; InputFileError when it is not a readable regular file of at
    most `max_bytes`, not valid `encoding`, or holds a NUL character."""
    source = str(path).replace("\x00", "\\x00")
    if "\x00" in str(path):
        raise InputFileError(source, "the file name contains a NUL character")
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise InputFileError(source, "cannot read: file not found") from None
    except OSError as exc:
        raise InputFileError(source, f"cannot read: {exc.strerror or exc}") from None
    if stat.S_ISDIR(st.st_mode):
        raise InputFileError(source, "is a directory, not a file")
    if not stat.S_ISREG(st.st_mode):
        raise InputFileError(source, "is not a regular file (a device, FIFO or socket)")
    if st.st_size > max_bytes:
        raise InputFileError(
            source, f"is {st.st_size:,} bytes; the limit is {max_bytes:,} bytes"
        )
    try:
        with open(path, "rb") as f:
            data = f.read(max_bytes + 1)
    except OSError as exc:
        raise InputFileError(source, f"cannot read: {exc.strerror or exc}") from None
    if len(data) > max_bytes:  # grew while we looked
        raise InputFileError(source, f"is larger than the limit of {max_bytes:,} bytes")
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise InputFileError(source, f"not UTF-8 text ({exc.reason})", line) from None
    nul = text.find("\x00")
    if nul >= 0:
        raise InputFileError(source, "contains a NUL character", text.count("\n", 0, nul) + 1)
    return text
