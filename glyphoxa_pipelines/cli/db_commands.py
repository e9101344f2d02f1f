"""`glyphoxa db start|stop|status|url` and `glyphoxa migrate`."""

from __future__ import annotations

import typer
from rich.console import Console

from glyphoxa_pipelines.cli.errors import user_errors

console = Console()
db_app = typer.Typer(help="The database: embedded PostgreSQL by default, or GLYPHOXA_DATABASE_URL.")


@db_app.command("start")
def start() -> None:
    """Start the embedded server (no-op when running or when a DSN is configured)."""
    from glyphoxa_pipelines.config import Settings
    from glyphoxa_pipelines.db import resolve_url

    settings = Settings.from_env()
    with user_errors():
        resolve_url(settings)
    where = "external database" if settings.database_url else f"embedded, {settings.pgdata}"
    console.print(f"database ready ({where})")


@db_app.command("stop")
def stop() -> None:
    """Stop the embedded server."""
    from glyphoxa_pipelines.config import Settings
    from glyphoxa_pipelines.db import embedded

    settings = Settings.from_env()
    if settings.database_url:
        console.print("GLYPHOXA_DATABASE_URL is set: nothing embedded to stop")
        return
    with user_errors():
        stopped = embedded.stop(settings.pgdata)
    console.print("stopped" if stopped else "not running")


@db_app.command("status")
def status() -> None:
    """Is the database reachable, and which migrations are applied."""
    import psycopg

    from glyphoxa_pipelines.config import Settings
    from glyphoxa_pipelines.db import embedded

    settings = Settings.from_env()
    if settings.database_url:
        url = settings.database_url
    else:
        st = embedded.status(settings.pgdata)
        if not st.running:
            console.print(f"embedded server: stopped ({settings.pgdata})")
            raise typer.Exit(1)
        console.print(f"embedded server: running, pid {st.pid} ({settings.pgdata})")
        url = embedded.with_database(st.url or "", settings.database_name)
    try:
        with psycopg.connect(url, connect_timeout=5) as conn:
            version = conn.execute("SHOW server_version").fetchone()
            rows = conn.execute("SELECT name FROM schema_migrations ORDER BY version").fetchall()
    except psycopg.Error as exc:
        console.print(f"database unreachable or not migrated: {exc}")
        raise typer.Exit(1) from exc
    console.print(
        f"PostgreSQL {version[0] if version else '?'}; migrations: " + ", ".join(r[0] for r in rows)
    )


@db_app.command("url")
def url() -> None:
    """Print the application database's connection URL (last line; psql and psycopg take it)."""
    from glyphoxa_pipelines.db import resolve_url

    with user_errors():
        print(resolve_url())


def migrate_command() -> None:
    """Apply pending migrations (safe to run concurrently and repeatedly)."""
    from glyphoxa_pipelines.config import Settings
    from glyphoxa_pipelines.db import migrate, resolve_url

    with user_errors():
        target = resolve_url(Settings.from_env(), migrate_schema=False)
        applied = migrate(target)
    console.print(f"applied: {', '.join(applied)}" if applied else "schema is up to date")


def register(app: typer.Typer) -> None:
    app.add_typer(db_app, name="db")
    app.command("migrate")(migrate_command)
