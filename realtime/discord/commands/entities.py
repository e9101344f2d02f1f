"""/entity add | list | remove, and the entity-name autocomplete other commands share."""

from __future__ import annotations

import json
from typing import Any

import discord
from discord import app_commands

from glyphoxa_pipelines.db.operations import Op
from glyphoxa_pipelines.memory import Entity, KnowledgeGraph, NpcProfile
from realtime.discord.context import BotContext
from realtime.discord.pager import PagedView, card
from realtime.discord.paging import clip
from realtime.discord.replies import BotError, send
from realtime.schemas import EntityIn

AUTOCOMPLETE_LIMIT = 25  # Discord shows at most 25 choices


def parse_attributes(text: str | None) -> dict[str, Any]:
    """The `attributes` option: a JSON object, e.g. {"race": "elf", "age": 300}."""
    if not text:
        return {}
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise BotError(f"attributes: not valid JSON ({exc.msg} at character {exc.pos + 1})"
                       ) from exc
    if not isinstance(value, dict):
        raise BotError('attributes: expected a JSON object, e.g. {"race": "elf"}')
    return value


async def entity_choices(
    ctx: BotContext, interaction: discord.Interaction, current: str, *, type_: str | None = None
) -> list[app_commands.Choice[str]]:
    """Entities whose name or alias contains what was typed; never raises (an autocomplete
    error would only leave the user with an empty list anyway)."""
    try:
        campaign = ctx.campaign(interaction)
        found = await ctx.service.run(
            KnowledgeGraph.find_entities.op(ctx.service.graph, campaign, type=type_,
                                            name=current or None, limit=AUTOCOMPLETE_LIMIT),
            transaction=False,
        )
    except Exception:  # noqa: BLE001 - see docstring
        return []
    return [app_commands.Choice(name=clip(f"{e.name} ({e.type})", 100), value=e.name[:100])
            for e in found]


def entity_group(ctx: BotContext) -> app_commands.Group:
    group = app_commands.Group(name="entity", description="The campaign's people, places, "
                               "things.", guild_only=True)

    async def names(interaction: discord.Interaction, current: str
                    ) -> list[app_commands.Choice[str]]:
        return await entity_choices(ctx, interaction, current)

    @group.command(name="add", description="Add or replace an entity (DM).")
    @app_commands.describe(
        name="Its name", type_="npc, location, item, faction, quest, ...",
        personality="For an NPC: how it behaves and talks",
        attributes='JSON object, e.g. {"race": "elf"}',
    )
    @app_commands.rename(type_="type")
    async def add(
        interaction: discord.Interaction, name: str, type_: str,
        personality: str | None = None, attributes: str | None = None,
    ) -> None:
        async with ctx.answering(interaction):
            campaign = ctx.campaign(interaction, edit=True)
            # The HTTP API's body schema: the same rules for names and types.
            spec = EntityIn(name=name.strip(), type=type_.strip().lower(),
                            attributes=parse_attributes(attributes))
            if personality and spec.type != "npc":
                raise BotError("personality is for NPCs (type npc).")
            graph = ctx.service.graph

            def op() -> Op:
                ent = yield from KnowledgeGraph.add_entity.op(
                    graph, Entity(campaign, "", spec.type, spec.name, [], spec.attributes)
                )
                if personality:
                    yield from KnowledgeGraph.upsert_npc_profile.op(
                        graph, NpcProfile(campaign, ent.id, personality=personality)
                    )
                return ent

            ent = await ctx.edit(campaign, op(), names=True)
            lines = [f"id `{ent.id}`"]
            if ent.attributes:
                lines.append(clip(json.dumps(ent.attributes, ensure_ascii=False), 1000))
            if personality:
                lines.append(f"personality: {clip(personality, 500)}")
            await send(interaction, embed=card(f"Added {ent.name} ({ent.type})",
                                               "\n".join(lines)))

    @group.command(name="list", description="List the campaign's entities.")
    @app_commands.describe(type_="Only this type (npc, location, ...)")
    @app_commands.rename(type_="type")
    async def list_(interaction: discord.Interaction, type_: str | None = None) -> None:
        async with ctx.answering(interaction):
            campaign = ctx.campaign(interaction)
            wanted = type_.strip().lower() if type_ else None
            found = await ctx.service.run(
                KnowledgeGraph.find_entities.op(ctx.service.graph, campaign, type=wanted,
                                                limit=5000),
                transaction=False,
            )
            if not found:
                await send(interaction, f"No {wanted or 'entities'} in this campaign yet.",
                           ephemeral=True)
                return
            lines = [f"**{e.name}** ({e.type})" for e in sorted(found, key=lambda e: e.name)]
            view = PagedView(f"{wanted or 'Entities'}: {len(found)}", lines)
            await send(interaction, embed=view.embed(), view=view if view.paged else None)

    @group.command(name="remove", description="Remove an entity and its facts (DM).")
    @app_commands.describe(name="Name, alias or id")
    @app_commands.autocomplete(name=names)
    async def remove(interaction: discord.Interaction, name: str) -> None:
        async with ctx.answering(interaction):
            campaign = ctx.campaign(interaction, edit=True)
            entity_id = await ctx.service.resolve_id(campaign, name)
            await ctx.service.delete_entity(campaign, entity_id)
            await send(interaction, f"Removed **{name}** (`{entity_id}`) and its facts.")

    return group
