"""The slash commands, gathered into one `CommandTree`; one module per concern."""

from __future__ import annotations

import discord
from discord import app_commands

from realtime.discord.commands.campaign import campaign_group
from realtime.discord.commands.entities import entity_group
from realtime.discord.commands.facts import fact_group, review_command
from realtime.discord.commands.npc import npc_command
from realtime.discord.commands.sessions import recap_command, scene_group, session_group
from realtime.discord.context import BotContext
from realtime.discord.replies import report


class GlyphoxaTree(app_commands.CommandTree):  # type: ignore[type-arg]
    """Errors the command bodies did not answer themselves (a failed check, a bug in
    argument conversion) still reach the user as one short line, never a traceback."""

    async def on_error(self, interaction: discord.Interaction,
                       error: app_commands.AppCommandError) -> None:
        await report(interaction, error)


def build_tree(client: discord.Client, ctx: BotContext) -> GlyphoxaTree:
    tree = GlyphoxaTree(client)
    for group in (entity_group(ctx), campaign_group(ctx), session_group(ctx),
                  scene_group(ctx), fact_group(ctx)):
        tree.add_command(group)
    for command in (recap_command(ctx), review_command(ctx), npc_command(ctx)):
        tree.add_command(command)
    return tree
