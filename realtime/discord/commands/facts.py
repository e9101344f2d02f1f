"""/fact secret | reveal | retcon and /review (the low-confidence queue and the heard spellings,
with buttons).

Facts are picked by autocomplete over `memory.search_facts` (the DM's view: every fact); the
choice's value is the fact's id. Answers that could spoil a secret are ephemeral.
"""

from __future__ import annotations

from typing import Any

import discord
from discord import app_commands

from glyphoxa_pipelines.memory import KnowledgeGraph, NotFoundError, Relationship
from realtime.discord.commands.sessions import split_names
from realtime.discord.context import BotContext
from realtime.discord.pager import card
from realtime.discord.paging import clip
from realtime.discord.replies import BotError, send
from realtime.tools import ToolScope


def parse_fact_id(text: str) -> int:
    """A fact option's value: its id, as autocomplete fills it in ('12' or '#12')."""
    raw = text.strip().lstrip("#")
    if not raw.isdigit():
        raise BotError(f"'{clip(text, 80)}' is not a fact: pick one from the list as you type.")
    return int(raw)


async def fact_choices(
    ctx: BotContext, interaction: discord.Interaction, current: str
) -> list[app_commands.Choice[str]]:
    try:
        campaign = ctx.campaign(interaction, edit=True)
        found = await ctx.service.call_tool(
            "memory.search_facts", {"query": current.strip() or None, "limit": 25},
            ToolScope(campaign),
        )
    except Exception:  # noqa: BLE001 - an autocomplete that fails shows nothing
        return []
    return [
        app_commands.Choice(name=clip(f"#{r['id']} {r['text']}", 100), value=str(r["id"]))
        for r in found["results"]
        if "relation" in r  # facts, not the events the tool may add
    ]


def fact_group(ctx: BotContext) -> app_commands.Group:
    group = app_commands.Group(name="fact", description="Facts: secrets, reveals, retcons "
                               "(DM).", guild_only=True)

    async def facts(interaction: discord.Interaction, current: str
                    ) -> list[app_commands.Choice[str]]:
        return await fact_choices(ctx, interaction, current)

    @group.command(name="secret", description="Make a fact secret (DM only, or known to the "
                   "NPCs listed).")
    @app_commands.describe(fact="The fact", known_by="NPCs who know it, comma-separated")
    @app_commands.autocomplete(fact=facts)
    async def secret(interaction: discord.Interaction, fact: str,
                     known_by: str | None = None) -> None:
        async with ctx.answering(interaction):
            campaign = ctx.campaign(interaction, edit=True)
            fact_id = parse_fact_id(fact)
            ids = [await ctx.service.resolve_id(campaign, n) for n in split_names(known_by)]
            rel = await ctx.service.set_visibility(campaign, fact_id, "secret", ids)
            who = ", ".join(split_names(known_by)) or "only the DM"
            await send(interaction, f"Fact #{rel.id} is secret now; known to {who}.",
                       ephemeral=True)

    @group.command(name="reveal", description="Reveal a secret or hidden fact: to some NPCs, "
                   "or to all.")
    @app_commands.describe(fact="The fact", to="NPCs told it, comma-separated (empty: all)")
    @app_commands.autocomplete(fact=facts)
    async def reveal(interaction: discord.Interaction, fact: str, to: str = "") -> None:
        async with ctx.answering(interaction):
            campaign = ctx.campaign(interaction, edit=True)
            names = split_names(to)
            npcs = [await ctx.service.resolve_id(campaign, n) for n in names] or None
            rel = await ctx.service.reveal(campaign, parse_fact_id(fact), npcs)
            who = ", ".join(names) if names else "every NPC"
            await send(interaction, f"Fact #{rel.id} revealed to {who}.", ephemeral=True)

    @group.command(name="retcon", description="A fact stops being true; optionally a new "
                   "target replaces it.")
    @app_commands.describe(fact="The fact", new_target="Same subject and relation, this "
                           "target instead")
    @app_commands.autocomplete(fact=facts)
    async def retcon(interaction: discord.Interaction, fact: str,
                     new_target: str | None = None) -> None:
        async with ctx.answering(interaction):
            campaign = ctx.campaign(interaction, edit=True)
            fact_id = parse_fact_id(fact)
            svc = ctx.service
            replacement = None
            if new_target:
                old = await svc.run(KnowledgeGraph.get_relationship.op(svc.graph, campaign,
                                                                       fact_id))
                if old is None:
                    raise NotFoundError(f"unknown fact {fact_id} in campaign {campaign!r}")
                replacement = Relationship(
                    campaign_id=campaign, source_id=old.source_id,
                    target_id=await svc.resolve_id(campaign, new_target),
                    rel_type=old.rel_type, visibility=old.visibility,
                    known_by=list(old.known_by), provenance="dm", dm_confirmed=True,
                )
            out = await svc.retcon(campaign, fact_id, replacement)
            tail = f"; replaced by fact #{out['replacement']['id']}" if out["replacement"] \
                else ""
            await send(interaction, f"Fact #{fact_id} is no longer true{tail}.", ephemeral=True)

    return group


class ReviewView(discord.ui.View):
    """One item at a time, pending facts first, then the spellings the pipeline heard for known
    entities: confirm makes a fact canon or a spelling an alias, reject drops the fact or
    dismisses the spelling for good, skip moves on."""

    def __init__(self, ctx: BotContext, campaign: str, facts: list[dict[str, Any]],
                 spellings: list[dict[str, Any]] | None = None, *,
                 timeout_s: float = 900.0) -> None:
        super().__init__(timeout=timeout_s)
        self.ctx = ctx
        self.campaign = campaign
        self.items: list[tuple[str, dict[str, Any]]] = [
            *(("fact", f) for f in facts), *(("spelling", s) for s in spellings or ())]
        self.index = 0
        self.decided: list[bool] = []  # confirmed (True) or rejected, in order

    @property
    def current(self) -> tuple[str, dict[str, Any]] | None:
        return self.items[self.index] if self.index < len(self.items) else None

    def embed(self) -> discord.Embed:
        if self.current is None:
            confirmed = sum(self.decided)
            return card("Review queue", f"Done: {confirmed} confirmed, "
                        f"{len(self.decided) - confirmed} rejected.")
        kind, item = self.current
        title = f"Review {self.index + 1}/{len(self.items)}"
        if kind == "spelling":
            sessions = ", ".join(item["sessions"])
            return card(title, f"**{item['spelling']}** heard for **{item['entity_name']}** "
                        f"({item['entity_type']}) in {sessions}.\nConfirm adds it as an alias: "
                        "the transcript corrector knows it as this name from now on. Reject: "
                        "never offered again.", footer=f"spelling · entity {item['entity_id']}")
        src = item["source"]
        lines = [f"**{item['text']}**", f"confidence {item['confidence']:.2f}"]
        if src.get("evidence"):
            lines.append(f"> {clip(src['evidence'], 600)}")
        return card(title, "\n".join(lines),
                    footer=f"fact #{item['id']}"
                    + (f" · session {src['session_id']}" if src.get("session_id") else ""))

    async def _answer(self, kind: str, item: dict[str, Any], yes: bool) -> None:
        svc = self.ctx.service
        if kind == "spelling":
            answer = svc.accept_spelling if yes else svc.dismiss_spelling
            await answer(self.campaign, item["entity_id"], item["spelling"])
        else:
            status = "canon" if yes else "rejected"
            await svc.set_fact_status(self.campaign, item["id"], status, yes)

    async def _decide(self, interaction: discord.Interaction, yes: bool | None) -> None:
        async with self.ctx.answering(interaction):
            if self.ctx.campaign(interaction, edit=True) != self.campaign:
                raise BotError("This review belongs to another campaign.")
            if self.current is None:
                raise BotError("Nothing left to review.")
            if yes is not None:
                await self._answer(*self.current, yes)
                self.decided.append(yes)
            self.index += 1
            if self.current is None:
                self.stop()
            await interaction.response.edit_message(
                embed=self.embed(), view=self if self.current is not None else None
            )

    @discord.ui.button(label="Confirm", style=discord.ButtonStyle.success)
    async def confirm(self, interaction: discord.Interaction, _: discord.ui.Button) -> None:
        await self._decide(interaction, True)

    @discord.ui.button(label="Reject", style=discord.ButtonStyle.danger)
    async def reject(self, interaction: discord.Interaction, _: discord.ui.Button) -> None:
        await self._decide(interaction, False)

    @discord.ui.button(label="Skip", style=discord.ButtonStyle.secondary)
    async def skip(self, interaction: discord.Interaction, _: discord.ui.Button) -> None:
        await self._decide(interaction, None)


def review_command(ctx: BotContext) -> app_commands.Command:  # type: ignore[type-arg]
    @app_commands.command(name="review",
                          description="Review low-confidence facts and heard spellings (DM).")
    @app_commands.guild_only()
    async def review(interaction: discord.Interaction) -> None:
        async with ctx.answering(interaction):
            campaign = ctx.campaign(interaction, edit=True)
            queue = await ctx.service.review_queue(campaign)
            spellings = await ctx.service.open_spellings(campaign)
            if not queue and not spellings:
                await send(interaction, "The review queue is empty.", ephemeral=True)
                return
            view = ReviewView(ctx, campaign, queue, spellings)
            await send(interaction, embed=view.embed(), view=view, ephemeral=True)

    return review
