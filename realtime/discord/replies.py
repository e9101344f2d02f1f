"""Answering an interaction, and turning errors into a short message for the DM.

Every command body runs inside `answering(interaction)`: an expected failure (unknown entity,
malformed file at line N, database degraded, not the DM) becomes one short ephemeral line
naming the problem; an unexpected one is logged with its traceback and the user sees only that
something went wrong. A traceback never reaches Discord.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import discord
from pydantic import ValidationError

from glyphoxa_pipelines.campaign.campaign_file import CampaignFileError
from glyphoxa_pipelines.campaign.tabletop.world import TabletopFileError
from glyphoxa_pipelines.db import DatabaseUnavailableError, StatementTimeoutError
from glyphoxa_pipelines.memory import InvalidInputError, NotFoundError
from realtime.discord.paging import MESSAGE_LIMIT, clip
from realtime.tools import ToolInputError

log = logging.getLogger(__name__)

UNEXPECTED = "Something went wrong on the bot's side; the bot's log has the details."


class BotError(Exception):
    """A problem to tell the user as is (its message is written for them)."""


class NotAllowed(BotError):
    """The command edits the campaign and the user is not the DM."""


def explain(exc: BaseException) -> str | None:
    """The user-facing line for an expected error; None for a bug."""
    if isinstance(exc, discord.app_commands.CommandInvokeError):
        return explain(exc.original)
    if isinstance(exc, BotError | NotFoundError | InvalidInputError):
        return str(exc)
    if isinstance(exc, CampaignFileError | TabletopFileError):
        return "Malformed campaign file:\n" + str(exc)
    if isinstance(exc, ToolInputError):
        return "Invalid input: " + str(exc)
    if isinstance(exc, ValidationError):
        problems = [
            f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()
        ]
        return "Invalid input: " + "; ".join(problems)
    if isinstance(exc, DatabaseUnavailableError):
        return "Memory degraded: the database is unreachable. Nothing was changed; try again " \
               "in a moment."
    if isinstance(exc, StatementTimeoutError):
        return "The database took too long to answer. Nothing was changed; try again."
    if isinstance(exc, discord.app_commands.CheckFailure):
        return str(exc) or "You cannot use this command here."
    return None


async def send(
    interaction: discord.Interaction,
    content: str | None = None,
    *,
    embed: discord.Embed | None = None,
    view: discord.ui.View | None = None,
    ephemeral: bool = False,
) -> None:
    """The first answer goes through the interaction's response, later ones as follow-ups
    (Discord accepts exactly one response per interaction)."""
    kwargs: dict[str, Any] = {"ephemeral": ephemeral}
    if content is not None:
        kwargs["content"] = clip(content, MESSAGE_LIMIT)
    if embed is not None:
        kwargs["embed"] = embed
    if view is not None:
        kwargs["view"] = view
    if interaction.response.is_done():
        await interaction.followup.send(**kwargs)
    else:
        await interaction.response.send_message(**kwargs)


async def report(interaction: discord.Interaction, exc: BaseException) -> None:
    message = explain(exc)
    if message is None:
        log.error("command failed", exc_info=exc)
        message = UNEXPECTED
    try:
        await send(interaction, message, ephemeral=True)
    except discord.HTTPException:
        log.warning("could not tell the user about an error (interaction expired?)")


@asynccontextmanager
async def answering(interaction: discord.Interaction) -> AsyncIterator[None]:
    """Run a command body; any error is reported to the user and goes no further."""
    try:
        yield
    except Exception as exc:  # noqa: BLE001 - reported (and bugs logged) in `report`
        await report(interaction, exc)
