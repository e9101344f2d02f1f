"""/campaign load <attachment>: a campaign YAML file, through the same parser and loader as
`glyphoxa campaign load` (problems reported as file:line, nothing loaded unless all is well)."""

from __future__ import annotations

import discord
from discord import app_commands

from glyphoxa_pipelines.campaign.campaign_file import parse_campaign_text
from glyphoxa_pipelines.campaign.campaign_loader import CampaignLoader, LoadReport
from glyphoxa_pipelines.campaign.tabletop.detect import detect_format, read_world_text
from glyphoxa_pipelines.campaign.tabletop.review import ImportReview
from realtime.discord.context import BotContext
from realtime.discord.pager import card
from realtime.discord.replies import BotError, send

MAX_FILE_BYTES = 2_000_000  # a campaign file is text; anything larger is a mistake


async def read_campaign_text(attachment: discord.Attachment) -> str:
    if attachment.size > MAX_FILE_BYTES:
        raise BotError(f"{attachment.filename}: {attachment.size:,} bytes; a campaign file "
                       f"may have at most {MAX_FILE_BYTES:,}.")
    data = await attachment.read()
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise BotError(f"{attachment.filename}: not UTF-8 text (byte {exc.start + 1}); "
                       "attach the campaign's YAML file.") from exc


def campaign_group(ctx: BotContext) -> app_commands.Group:
    group = app_commands.Group(name="campaign", description="The campaign file.",
                               guild_only=True)

    @group.command(name="load", description="Load or update the campaign from a YAML file "
                   "(DM).")
    @app_commands.describe(file="The campaign YAML file")
    async def load(interaction: discord.Interaction, file: discord.Attachment) -> None:
        async with ctx.answering(interaction):
            campaign = ctx.campaign(interaction, edit=True)
            text = await read_campaign_text(file)
            if detect_format(text) != "yaml":
                await stage_tabletop(interaction, campaign, text, file.filename)
                return
            parsed = parse_campaign_text(text, file.filename)
            if parsed.campaign is not None and parsed.campaign.id != campaign:
                raise BotError(f"{file.filename} describes campaign '{parsed.campaign.id}'; "
                               f"this server runs '{campaign}'. Nothing was loaded.")
            # Loading many rows can outlast Discord's 3 s answer deadline.
            await interaction.response.defer(ephemeral=True, thinking=True)
            loader = CampaignLoader(ctx.service.db)
            rep: LoadReport = await ctx.edit(
                campaign, CampaignLoader.load.op(loader, parsed, campaign),
                names=True,
            )
            await send(interaction, embed=card(
                f"Campaign {rep.campaign_id} loaded",
                f"{rep.entities} entities ({rep.entities_changed} changed, "
                f"{rep.removed_entities} removed)\n"
                f"{rep.relationships} relationships ({rep.removed_relationships} removed)\n"
                f"{rep.npcs} NPC profiles",
            ), ephemeral=True)

    async def stage_tabletop(interaction: discord.Interaction, campaign: str, text: str,
                             filename: str) -> None:
        """A Foundry world, Roll20 export or CSV: staged for the DM's review, as the CLI does
        ("the DM reviews and confirms imported entities before they enter the graph")."""
        world = read_world_text(text, filename, detect_format(text))
        staged = await ctx.service.run(ImportReview.stage.op(ImportReview(ctx.service.db),
                                                             campaign, world, text))
        note = ("nothing enters the world until the DM accepts it "
                f"(`glyphoxa campaign accept {staged.id} -c {campaign}`)"
                if staged.created else f"imported before as batch {staged.id}; nothing changed")
        await send(interaction, embed=card(
            f"{filename}: staged {len(world.entities)} entities for review", note,
        ), ephemeral=True)

    return group
