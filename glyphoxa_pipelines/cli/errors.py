"""How CLI commands turn expected errors into a message and a non-zero exit."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import typer
from rich.console import Console
from rich.markup import escape

# soft_wrap: a long `file:line: problem` stays on one line, so it can be read and grepped.
err_console = Console(stderr=True, soft_wrap=True)


@contextmanager
def user_errors(*expected: type[BaseException]) -> Iterator[None]:
    """Print expected errors (bad files, unknown ids, unreachable database) as one clear
    message and exit 2, instead of a traceback."""
    from glyphoxa_pipelines.db import DatabaseUnavailableError, MigrationError
    from glyphoxa_pipelines.db.embedded import EmbeddedServerError
    from glyphoxa_pipelines.memory.errors import MemoryError_

    kinds = (
        *expected,
        MemoryError_,
        DatabaseUnavailableError,
        MigrationError,
        EmbeddedServerError,
    )
    try:
        yield
    except kinds as exc:
        err_console.print(f"[bold red]error:[/] {escape(str(exc))}", highlight=False, markup=True)
        raise typer.Exit(2) from exc
