"""Pipeline commands: `dev`, `session import|list`, `process`, `backfill`, `status`.

Dagster is imported inside the command functions only: the realtime service imports this CLI
package and must never load Dagster.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.table import Table

from glyphoxa_pipelines.cli.errors import user_errors

console = Console()
session_app = typer.Typer(help="Game sessions: import past transcripts.", no_args_is_help=True)

CampaignOpt = typer.Option(..., "--campaign", "-c", help="Campaign id.")


def _assets_option(value: str | None) -> list[str] | None:
    return [a.strip() for a in value.split(",") if a.strip()] if value else None


# ----------------------------------------------------------------------------- session import


@session_app.command("import")
def import_command(
    file: Path = typer.Argument(..., help="Transcript: JSONL, text, SRT, WebVTT or CRD3 JSON."),
    campaign: str = CampaignOpt,
    session_id: str | None = typer.Option(None, "--session", help="Session id (default: file)."),
    title: str | None = typer.Option(None, help="Session title (default: file name)."),
    fmt: str | None = typer.Option(None, "--format", help="jsonl, text, srt, vtt or crd3."),
    dm: list[str] = typer.Option([], "--dm", help="Speaker name(s) that are the DM."),
    replace: bool = typer.Option(
        False, "--replace", help="Replace the session's entries if it holds another version."
    ),
    started_at: datetime | None = typer.Option(
        None, "--started-at", formats=["%Y-%m-%dT%H:%M:%S%z", "%Y-%m-%dT%H:%M:%S",
                                       "%Y-%m-%d %H:%M", "%Y-%m-%d"],
        help="When the session began (files without their own times; UTC unless given).",
    ),
    session_number: int | None = typer.Option(
        None, "--session-number", min=1,
        help="Episode number: an undated file goes that many weeks into the timeline.",
    ),
) -> None:
    """Import a past session's transcript as an ended session (the sensor then processes it).
    A bad file fails with file:line and imports nothing; a file that differs from the version
    already imported is refused (naming the changed lines) unless --replace is given. A file
    without its own times is dated --started-at, else by --session-number, else a week after
    the campaign's latest session (`glyphoxa session list` shows the timeline)."""
    from glyphoxa_pipelines.campaign.session_import import import_session
    from glyphoxa_pipelines.campaign.transcript_import import FORMATS, TranscriptImportError
    from glyphoxa_pipelines.config import Settings
    from glyphoxa_pipelines.db import open_database
    from glyphoxa_pipelines.memory.limits import LimitError, check_id, check_name

    if fmt is not None and fmt not in FORMATS:
        raise typer.BadParameter(f"--format must be one of {', '.join(FORMATS)}")
    with user_errors(LimitError):
        check_id(campaign, "--campaign")
        if session_id is not None:
            check_id(session_id, "--session")
        if title is not None:
            check_name(title, "--title")
        for name in dm:
            check_name(name, "--dm")
    with user_errors(TranscriptImportError), open_database(Settings.from_env()) as db:
        result = import_session(
            db,
            campaign,
            file,
            session_id=session_id,
            title=title,
            format=fmt,  # type: ignore[arg-type]
            dm_speakers=set(dm) or None,
            replace=replace,
            start_at=started_at.replace(tzinfo=started_at.tzinfo or UTC) if started_at else None,
            session_number=session_number,
        )
    t = result.transcript
    console.print(
        f"session [bold]{result.session.id}[/] ({t.format}): {len(t.entries)} entries, "
        f"{result.written} new"
        + (f" (replacing {result.replaced})" if result.replaced else "")
        + f", {len(t.speakers)} speakers, {t.duration_s / 60:.0f} min, ended; "
        + f"started {result.session.started_at:%Y-%m-%d %H:%M %Z}"
    )


@session_app.command("list")
def list_command(campaign: str = CampaignOpt) -> None:
    """The campaign's timeline: sessions oldest first, numbered in that order."""
    from glyphoxa_pipelines.config import Settings
    from glyphoxa_pipelines.db import open_database
    from glyphoxa_pipelines.memory import SessionStore
    from glyphoxa_pipelines.memory.limits import LimitError, check_id

    with user_errors(LimitError), open_database(Settings.from_env()) as db:
        check_id(campaign, "--campaign")
        sessions = SessionStore(db).list_sessions(campaign, 10_000)
    # Tab-separated like the other list commands, so the timeline can be read and piped.
    ordered = sorted(sessions, key=lambda s: (s.started_at, s.id))
    for n, s in enumerate(ordered, 1):
        print(f"{n}\t{s.started_at:%Y-%m-%d %H:%M %Z}\t{s.status}\t{s.id}\t{s.title}")


# ----------------------------------------------------------------------------- process


def _short(metadata: dict[str, Any], n: int = 5) -> str:
    shown = [
        f"{k}={v}"
        for k, v in metadata.items()
        if not isinstance(v, dict | list) and k not in ("preview", "story_preview")
    ]
    return ", ".join(shown[:n])


def process_command(
    campaign: str = CampaignOpt,
    session: str | None = typer.Option(None, "--session", "-s", help="Only this session."),
    assets: str | None = typer.Option(None, help="Comma-separated assets (default: all)."),
    consolidate: bool = typer.Option(True, help="Run the campaign assets after the sessions."),
) -> None:
    """Run the session chain (and consolidation) in-process: the Dagster assets' code, no
    daemon needed."""
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    from glyphoxa_pipelines.config import Settings
    from glyphoxa_pipelines.db import open_database
    from glyphoxa_pipelines.memory import SessionStore
    from glyphoxa_pipelines.memory.pipeline_rows import session_rows
    from glyphoxa_pipelines.pipeline.backfill import split_assets
    from glyphoxa_pipelines.pipeline.runner import run_campaign_chain

    settings = Settings.from_env()
    try:
        session_assets, campaign_assets = split_assets(_assets_option(assets))
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from exc
    started = time.perf_counter()
    with user_errors(), open_database(settings) as db:
        db.run(session_rows.campaign_settings_op(campaign))
        if session:
            found = SessionStore(db).get_session(session)
            if found is None or found.campaign_id != campaign:
                raise typer.BadParameter(f"no session {session!r} in campaign {campaign!r}")
            session_ids = [session]
        else:
            session_ids = db.run(session_rows.campaign_session_ids_op(campaign))
        total = len(session_ids) * len(session_assets) + (
            len(campaign_assets) if consolidate else 0
        )
        with Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            TextColumn("{task.completed}/{task.total}"),
            TimeElapsedColumn(),
            console=console,
            transient=True,
        ) as bar:
            task = bar.add_task("processing", total=total)

            def progress(asset: str, phase: str, outcome: Any) -> None:
                if phase == "start":
                    bar.update(task, description=f"{asset}")
                else:
                    bar.advance(task)

            results = run_campaign_chain(
                db,
                campaign,
                settings=settings,
                session_ids=session_ids,
                assets=[*session_assets, *campaign_assets],
                consolidate=consolidate,
                progress=progress,
            )
    table = Table(title=f"campaign {campaign}: {len(session_ids)} session(s)")
    for col, justify in (("key", "left"), ("asset", "left"), ("s", "right"), ("metadata", "left")):
        table.add_column(col, justify=justify)  # type: ignore[arg-type]
    failed = 0
    for key, outcomes in results.items():
        for asset, outcome in outcomes.items():
            note = _short(outcome.metadata)
            if outcome.failed_checks:
                failed += len(outcome.failed_checks)
                note += " [red]failed: " + ", ".join(c.name for c in outcome.failed_checks)
            table.add_row(key, asset, f"{outcome.seconds:.2f}", note)
    console.print(table)
    console.print(f"done in {time.perf_counter() - started:.1f} s, {failed} failed check(s)")


# ----------------------------------------------------------------------------- status


def status_command(
    campaign: str = CampaignOpt,
    model: str | None = typer.Option(
        None, help="Embedding model to check (default: the configured one)."
    ),
) -> None:
    """Sessions whose rows are missing or were made by an older model or extractor version."""
    from glyphoxa_pipelines.config import Settings
    from glyphoxa_pipelines.db import open_database
    from glyphoxa_pipelines.memory import CampaignStore
    from glyphoxa_pipelines.pipeline.services import PipelineServices
    from glyphoxa_pipelines.pipeline.staleness import stale_sessions

    settings = Settings.from_env()
    with user_errors(), open_database(settings) as db:
        camp = CampaignStore(db).require(campaign)
        report = stale_sessions(PipelineServices(db, settings), campaign, embedding_model=model)
    table = Table(
        title=f"{campaign}: active embedding model {camp.active_embedding_model}, "
        f"configured {model or settings.embedding_model}"
    )
    for col in ("session", "status", "entries", "stale assets", "why"):
        table.add_column(col)
    for s in report:
        table.add_row(
            s.session_id,
            s.status,
            str(s.entries),
            ", ".join(s.stale_assets) or "[green]up to date[/]",
            "; ".join(s.reasons),
        )
    console.print(table)
    stale = [s for s in report if s.stale]
    console.print(f"{len(stale)} of {len(report)} session(s) stale")
    if stale:
        console.print(f"re-run them with: glyphoxa backfill --campaign {campaign}")


# ----------------------------------------------------------------------------- backfill


def backfill_command(
    campaign: str = CampaignOpt,
    assets: str | None = typer.Option(
        None, help="Comma-separated assets to re-run (default: the whole chain)."
    ),
) -> None:
    """Launch a Dagster backfill of the chosen assets over all of the campaign's sessions
    (visible and controllable in the UI; the daemon of `glyphoxa dev` runs it)."""
    from dagster import DagsterInstance

    from glyphoxa_pipelines.config import Settings
    from glyphoxa_pipelines.db import open_database
    from glyphoxa_pipelines.pipeline.backfill import (
        BackfillLaunchError,
        daemon_running,
        launch_campaign_backfill,
    )
    from glyphoxa_pipelines.pipeline.dagster_home import apply_dagster_env

    settings = Settings.from_env()
    with user_errors(ValueError, BackfillLaunchError), open_database(settings) as db:
        apply_dagster_env(settings)
        with DagsterInstance.get() as instance:
            launch = launch_campaign_backfill(
                db, campaign, _assets_option(assets), instance=instance
            )
            running = daemon_running(instance)
    for bid in launch.backfill_ids:
        console.print(f"backfill [bold]{bid}[/]: http://127.0.0.1:3000/runs/b/{bid}")
    console.print(
        f"{len(launch.session_ids)} session(s) x {', '.join(launch.session_assets) or '-'}"
        + (f"; campaign: {', '.join(launch.campaign_assets)}" if launch.campaign_assets else "")
    )
    if not running:
        console.print("[yellow]no Dagster daemon is running: start `glyphoxa dev` to execute it")


# ----------------------------------------------------------------------------- dev


def dagster_env_command() -> None:
    """Print the environment a hand-started `dagster dev` / `dagster-daemon` needs."""
    from glyphoxa_pipelines.config import Settings
    from glyphoxa_pipelines.pipeline.dagster_home import prepare_dagster_home

    with user_errors():
        env = prepare_dagster_home(Settings.from_env())
    for key, value in env.items():
        print(f"export {key}='{value}'")


def dev_command(
    host: str = typer.Option("127.0.0.1", help="Webserver host."),
    port: int = typer.Option(3000, help="Webserver port."),
) -> None:
    """Start the embedded database, the Dagster webserver and the daemon (UI on
    http://127.0.0.1:3000); Ctrl-C stops everything cleanly."""
    from glyphoxa_pipelines.config import Settings
    from glyphoxa_pipelines.db import embedded, resolve_url
    from glyphoxa_pipelines.pipeline.dagster_home import REPO_ROOT, WORKSPACE_YAML

    settings = Settings.from_env()
    was_running = settings.database_url is None and embedded.status(settings.pgdata).running
    with user_errors():
        resolve_url(settings)  # start + migrate the memory database
        from glyphoxa_pipelines.pipeline.dagster_home import prepare_dagster_home

        env = {**os.environ, **prepare_dagster_home(settings)}
    dagster = Path(sys.executable).with_name("dagster")
    cmd = [str(dagster), "dev", "-w", str(WORKSPACE_YAML), "-h", host, "-p", str(port)]
    console.print(f"Dagster UI on http://{host}:{port} (DAGSTER_HOME={env['DAGSTER_HOME']})")
    console.print("Ctrl-C stops the webserver, the daemon and the embedded database.")
    _interrupt_on_signals()
    child = subprocess.Popen(
        cmd, env=env, cwd=REPO_ROOT, start_new_session=True, preexec_fn=_default_signals
    )
    code = 0
    try:
        code = child.wait()
    except KeyboardInterrupt:
        console.print("stopping Dagster...")
    finally:
        _stop_child(child)
        if settings.database_url is None and not was_running:
            embedded.stop(settings.pgdata)
            console.print("embedded PostgreSQL stopped")
    raise typer.Exit(code)


def _interrupt_on_signals() -> None:
    """Ctrl-C and SIGTERM both mean "stop everything", even when this process was started
    with SIGINT ignored (as background jobs of a non-interactive shell are)."""

    def interrupt(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGINT, interrupt)
    signal.signal(signal.SIGTERM, interrupt)


def _default_signals() -> None:
    """In the child: default SIGINT/SIGTERM, so `dagster dev` turns our SIGINT into its
    orderly shutdown (an inherited "ignore" would make it deaf)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _stop_child(child: subprocess.Popen[bytes], grace_s: float = 20.0) -> None:
    """SIGINT to `dagster dev` (it shuts its webserver and daemon down), then SIGTERM/SIGKILL
    to the group it leads if it lingers."""
    if child.poll() is not None:
        return
    for sig, wait_s in ((signal.SIGINT, grace_s), (signal.SIGTERM, 5.0), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(child.pid, sig)
        except ProcessLookupError:
            return
        try:
            child.wait(timeout=wait_s)
            return
        except subprocess.TimeoutExpired:
            continue


def register(app: typer.Typer) -> None:
    app.add_typer(session_app, name="session")
    app.command("process")(process_command)
    app.command("status")(status_command)
    app.command("backfill")(backfill_command)
    app.command("dev")(dev_command)
    app.command("dagster-env")(dagster_env_command)
