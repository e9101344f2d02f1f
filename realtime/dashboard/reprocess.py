"""The reprocess button: launch the campaign's Dagster backfill the way the CLI does.

The realtime service never imports Dagster (a test holds it to that), and the backfill's code
path (`glyphoxa_pipelines.pipeline.backfill.launch_campaign_backfill`) needs a Dagster instance;
so the button runs `glyphoxa backfill --campaign C` as a child process: the same command a DM
types, the same partitions and tags, the run visible in the Dagster UI and executed by the
daemon of `glyphoxa dev`. Loading the code location takes seconds to minutes, so the page does
not wait: it polls the launch, which keeps the child's exit code and last output lines.
"""

from __future__ import annotations

import asyncio
import shutil
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

OUTPUT_TAIL_CHARS = 4000


def glyphoxa_command() -> list[str]:
    """The `glyphoxa` script of this interpreter's environment, else the one on PATH."""
    beside = Path(sys.executable).parent / "glyphoxa"
    found = str(beside) if beside.exists() else shutil.which("glyphoxa")
    if found is None:
        return [sys.executable, "-c", "from glyphoxa_pipelines.cli import main; main()"]
    return [found]


@dataclass
class Launch:
    campaign_id: str
    command: list[str]
    started: float = field(default_factory=time.time)
    returncode: int | None = None
    output: str = ""

    @property
    def running(self) -> bool:
        return self.returncode is None


class Reprocessor:
    """Launches backfills, one at a time per campaign, and remembers the last of each."""

    def __init__(self, command: Sequence[str] | None = None) -> None:
        # `command` replaces the `glyphoxa` executable (tests point it at a recorder).
        self.command = list(command) if command else glyphoxa_command()
        self.launches: dict[str, Launch] = {}
        self._tasks: set[asyncio.Task[None]] = set()

    def launch(self, campaign_id: str) -> Launch:
        current = self.launches.get(campaign_id)
        if current is not None and current.running:
            return current  # a second click does not start a second backfill
        launch = Launch(campaign_id, [*self.command, "backfill", "--campaign", campaign_id])
        self.launches[campaign_id] = launch
        task = asyncio.get_running_loop().create_task(self._run(launch))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return launch

    @staticmethod
    async def _run(launch: Launch) -> None:
        try:
            proc = await asyncio.create_subprocess_exec(
                *launch.command, stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.STDOUT, stdin=asyncio.subprocess.DEVNULL,
            )
            out, _ = await proc.communicate()
            launch.output = out.decode("utf-8", "replace")[-OUTPUT_TAIL_CHARS:]
            launch.returncode = proc.returncode if proc.returncode is not None else -1
        except OSError as exc:
            launch.output = f"could not start {launch.command[0]}: {exc}"
            launch.returncode = -1
