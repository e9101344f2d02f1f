"""Dagster's own storage: a `dagster` database beside the memory tables, and a DAGSTER_HOME.

Why generated at run time: the embedded PostgreSQL listens on a unix socket inside
$GLYPHOXA_HOME/pgdata, so its URL is only known once the server runs. The repo's `dagster.yaml`
reads the URL from GLYPHOXA_DAGSTER_PG_URL; this module resolves that URL and prepares a
DAGSTER_HOME holding a copy of the file. No Dagster import here (the realtime service may import
the settings this uses).
"""

from __future__ import annotations

import contextlib
import os
import shutil
from pathlib import Path

from glyphoxa_pipelines.config import Settings
from glyphoxa_pipelines.db import embedded

REPO_ROOT = Path(__file__).resolve().parents[2]
DAGSTER_YAML = REPO_ROOT / "dagster.yaml"
WORKSPACE_YAML = REPO_ROOT / "workspace.yaml"
PG_URL_ENV = "GLYPHOXA_DAGSTER_PG_URL"


def dagster_database_url(settings: Settings) -> str:
    """URL of Dagster's database on the same server as the memory database (created if
    missing). With a configured DSN the database name is swapped; else the embedded server is
    started (or reused) and the database created on it."""
    if settings.database_url:
        admin = embedded.with_database(settings.database_url, "postgres")
        url = embedded.with_database(settings.database_url, settings.dagster_database_name)
        # A managed server may forbid CREATE DATABASE: then it must exist already, and
        # dagster-postgres says so when it connects.
        with contextlib.suppress(Exception):
            embedded.ensure_database(admin, settings.dagster_database_name)
        return url
    admin = embedded.start(settings.pgdata)
    embedded.ensure_database(admin, settings.dagster_database_name)
    return embedded.with_database(admin, settings.dagster_database_name)


def sqlalchemy_url(url: str) -> str:
    """dagster-postgres hands the URL to SQLAlchemy and its SQL is written for psycopg2
    (`NOTIFY channel, :param` fails under psycopg 3, SQLAlchemy 2.1's default driver), so the
    driver is pinned; libpq key=value DSNs become URLs."""
    for prefix in ("postgresql+psycopg2://", "postgresql://", "postgres://"):
        if url.startswith(prefix):
            return "postgresql+psycopg2://" + url[len(prefix) :]
    import psycopg

    params = psycopg.conninfo.conninfo_to_dict(url)
    user = params.pop("user", "postgres")
    password = params.pop("password", "")
    dbname = params.pop("dbname", "postgres")
    host = params.pop("host", None)
    port = params.pop("port", None)
    from urllib.parse import quote, urlencode

    netloc = f"{quote(str(user))}:{quote(str(password))}@"
    query = dict(params)
    if host and str(host).startswith("/"):
        query["host"] = host
    elif host:
        netloc += str(host) + (f":{port}" if port else "")
    elif port:
        query["port"] = port
    tail = f"?{urlencode(query)}" if query else ""
    return f"postgresql+psycopg2://{netloc}/{quote(str(dbname))}{tail}"


def prepare_dagster_home(settings: Settings, home: Path | None = None) -> dict[str, str]:
    """Create DAGSTER_HOME (default $GLYPHOXA_HOME/dagster) with the repo's dagster.yaml and
    return the environment variables a Dagster process needs (DAGSTER_HOME and the storage
    URL). The caller decides whether to put them in os.environ or a child's environment."""
    target = (home or settings.home / "dagster").resolve()
    target.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(DAGSTER_YAML, target / "dagster.yaml")
    return {
        "DAGSTER_HOME": str(target),
        PG_URL_ENV: sqlalchemy_url(dagster_database_url(settings)),
        "GLYPHOXA_HOME": str(settings.home),
    }


def apply_dagster_env(settings: Settings) -> dict[str, str]:
    """`prepare_dagster_home` and export the result into this process's environment."""
    env = prepare_dagster_home(settings)
    os.environ.update(env)
    return env
