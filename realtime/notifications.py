"""One LISTEN connection per service process, for every channel the service follows.

Several processes and hosts share one database, so what one of them changes the others learn
from PostgreSQL's notifications: graph changes (the identity cache) and sessions' latest write
positions (reads on the replica). A connection per channel would double the idle connections
per worker for nothing; a lost connection means notifications were missed, which each
follower must treat as "assume everything changed" (`on_connected(False)`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
from collections.abc import Callable, Mapping

import psycopg

log = logging.getLogger(__name__)

# Channel names are this code's constants; plain identifiers, written as they are.
_CHANNEL = re.compile(r"[a-z_][a-z0-9_]{0,62}")


async def listen(
    url: str,
    handlers: Mapping[str, Callable[[str], None]],
    on_connected: Callable[[bool], None],
    *,
    retry_s: float = 0.5,
) -> None:
    """Forever: LISTEN on every channel of `handlers` and pass each payload to its channel's
    handler. Reports `on_connected(True)` once listening and `on_connected(False)` when the
    connection is lost; reconnects every `retry_s` until cancelled."""
    while True:
        try:
            conn = await psycopg.AsyncConnection.connect(url, autocommit=True, connect_timeout=2)
        except (psycopg.Error, OSError) as exc:
            log.debug("change listener cannot connect: %s", exc)
            await asyncio.sleep(retry_s)
            continue
        try:
            async with conn:
                for channel in handlers:
                    await conn.execute(f"LISTEN {channel}")
                on_connected(True)
                async for note in conn.notifies():
                    handler = handlers.get(note.channel)
                    if handler is not None:
                        handler(note.payload)
        except (psycopg.Error, OSError) as exc:
            log.warning("change listener lost its connection: %s", exc)
        finally:
            on_connected(False)
            with contextlib.suppress(Exception):
                await conn.close()
        await asyncio.sleep(retry_s)
