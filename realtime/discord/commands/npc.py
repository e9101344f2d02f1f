"""/npc <name>: what an NPC knows, as that NPC would see it (DM only: it shows secrets the NPC
is in on). During a live session that is its hot context, the very prompt block its LLM gets;
between sessions, its entity and the facts visible to it (the `memory.query_entities` tool
asked in the NPC's own scope)."""

from __future__ import annotations

import discord
from discord import app_commands

from realtime.discord.commands.entities import entity_choices
from realtime.discord.context import BotContext
from realtime.discord.pager import card
from realtime.discord.paging import EMBED_DESCRIPTION_LIMIT, clip
from realtime.discord.replies import BotError, send
from realtime.tools import ToolScope


def npc_command(ctx: BotContext) -> app_commands.Command:  # type: ignore[type-arg]
    async def npcs(interaction: discord.Interaction, current: str
                   ) -> list[app_commands.Choice[str]]:
        return await entity_choices(ctx, interaction, current, type_="npc")

    @app_commands.command(name="npc", description="What an NPC knows, as it sees it (DM).")
    @app_commands.describe(name="The NPC")
    @app_commands.autocomplete(name=npcs)
    @app_commands.guild_only()
    async def npc(interaction: discord.Interaction, name: str) -> None:
        async with ctx.answering(interaction):
            campaign = ctx.campaign(interaction, edit=True)
            svc = ctx.service
            # An item or a place named here would show the secrets it is party to.
            npc_id = await svc.resolve_id(campaign, name)
            await svc.viewer(campaign, npc_id)
            live = await ctx.live_session(campaign)
            if live is not None:
                hot = await svc.hot_context(live.id, npc_id)
                footer = f"hot context · ~{hot.token_estimate} tokens · session {live.id}"
                if hot.degraded:
                    footer += " · memory degraded: last known context"
                await send(interaction, embed=card(
                    f"{name}, as it sees things", hot.prompt, footer=footer), ephemeral=True)
                return
            found = await svc.call_tool("memory.query_entities", {"name": npc_id, "limit": 1},
                                        ToolScope(campaign, None, npc_id))
            if not found["results"]:
                raise BotError(f"unknown entity {name!r} in campaign {campaign!r}")
            ent = found["results"][0]
            desc = str(ent["attributes"].get("description", "")).strip()
            lines = [desc] if desc else []
            lines += [f"• {f['text']}" for f in ent["facts"]]
            text = "\n".join(lines) or "It knows nothing in particular yet."
            await send(interaction, embed=card(
                f"{ent['name']}, as it sees things", clip(text, EMBED_DESCRIPTION_LIMIT),
                footer="identity (no live session)"), ephemeral=True)

    return npc
