"""/session start | end, /scene set, /recap: the session lifecycle from the table."""

from __future__ import annotations

import discord
from discord import app_commands

from glyphoxa_pipelines.memory import RecapStore, SessionStore
from realtime.discord.context import BotContext
from realtime.discord.pager import card
from realtime.discord.paging import clip
from realtime.discord.replies import BotError, send
from realtime.schemas import SceneIn
from realtime.tools import ToolScope


def split_names(text: str | None) -> list[str]:
    """'Mira, Grimjaw ,' -> ['Mira', 'Grimjaw']."""
    return [n.strip() for n in (text or "").split(",") if n.strip()]


async def session_choices(
    ctx: BotContext, interaction: discord.Interaction, current: str
) -> list[app_commands.Choice[str]]:
    """The campaign's recent sessions matching what was typed (id or title)."""
    try:
        campaign = ctx.campaign(interaction)
        sessions = await ctx.service.run(
            SessionStore.list_sessions.op(ctx.service.sessions, campaign, 100),
            transaction=False,
        )
    except Exception:  # noqa: BLE001 - an autocomplete that fails shows nothing
        return []
    typed = current.casefold()
    return [
        app_commands.Choice(name=clip(f"{s.title or s.id} ({s.status})", 100), value=s.id)
        for s in sessions
        if typed in s.id.casefold() or typed in s.title.casefold()
    ][:25]


def session_group(ctx: BotContext) -> app_commands.Group:
    group = app_commands.Group(name="session", description="Game sessions.", guild_only=True)

    @group.command(name="start", description="Start a session (DM).")
    @app_commands.describe(title="The session's title")
    async def start(interaction: discord.Interaction, title: str | None = None) -> None:
        async with ctx.answering(interaction):
            campaign = ctx.campaign(interaction, edit=True)
            live = await ctx.live_session(campaign)
            if live is not None:
                raise BotError(f"Session '{live.title or live.id}' is still live: end it with "
                               "/session end first.")
            session = await ctx.service.start_session(campaign, title=title or "")
            note = ""
            channel = getattr(getattr(interaction.user, "voice", None), "channel", None)
            if ctx.voice is not None and channel is not None:
                await ctx.voice.join(channel, session.id)
                note = f"\nListening in {channel.name}."
            await send(interaction, embed=card(f"Session started: {session.title or session.id}",
                                               f"id `{session.id}`{note}"))

    @group.command(name="end", description="End the live session; the pipeline then "
                   "processes it (DM).")
    async def end(interaction: discord.Interaction) -> None:
        async with ctx.answering(interaction):
            campaign = ctx.campaign(interaction, edit=True)
            live = await ctx.require_live_session(campaign)
            session = await ctx.service.end_session(live.id)
            if ctx.voice is not None and interaction.guild_id is not None:
                await ctx.voice.leave(interaction.guild_id)
            await send(interaction, embed=card(
                f"Session ended: {session.title or session.id}",
                "The pipeline will transcribe, index and summarise it; /recap shows the "
                "recap once it is written.",
            ))

    return group


def scene_group(ctx: BotContext) -> app_commands.Group:
    group = app_commands.Group(name="scene", description="The live session's scene.",
                               guild_only=True)

    @group.command(name="set", description="Set where the scene is and who is present (DM).")
    @app_commands.describe(location="Where the scene takes place",
                           present="Who is present, comma-separated",
                           quests="Active quests, comma-separated")
    async def set_(interaction: discord.Interaction, location: str | None = None,
                   present: str | None = None, quests: str | None = None) -> None:
        async with ctx.answering(interaction):
            campaign = ctx.campaign(interaction, edit=True)
            live = await ctx.require_live_session(campaign)
            scene = SceneIn(location=location, present=split_names(present),
                            quests=split_names(quests))
            await ctx.service.set_scene(live.id, scene.model_dump())
            lines = [f"**Location:** {scene.location or '-'}",
                     f"**Present:** {', '.join(scene.present) or '-'}"]
            if scene.quests:
                lines.append(f"**Quests:** {', '.join(str(q) for q in scene.quests)}")
            await send(interaction, embed=card("Scene set", "\n".join(lines)))

    return group


def recap_command(ctx: BotContext) -> app_commands.Command:  # type: ignore[type-arg]
    async def sessions(interaction: discord.Interaction, current: str
                       ) -> list[app_commands.Choice[str]]:
        return await session_choices(ctx, interaction, current)

    @app_commands.command(name="recap", description="The recap of a session (default: the "
                          "last one ended).")
    @app_commands.describe(session="Which session")
    @app_commands.autocomplete(session=sessions)
    @app_commands.guild_only()
    async def recap(interaction: discord.Interaction, session: str | None = None) -> None:
        async with ctx.answering(interaction):
            campaign = ctx.campaign(interaction)
            svc = ctx.service
            if session is None:
                ended = await svc.run(
                    SessionStore.list_sessions.op(svc.sessions, campaign, 1, status="ended"),
                    transaction=False,
                )
                if not ended:
                    raise BotError("No session has ended yet, so there is no recap.")
                session_id = ended[0].id
            else:
                session_id = session
            if await svc.campaign_of(session_id) != campaign:
                raise BotError(f"unknown session '{session_id}'")
            found = await svc.run(RecapStore.get.op(RecapStore(svc.db), session_id),
                                  transaction=False)
            text = found.text if found else ""
            if not text:
                # No recap yet: the summary the memory tools serve, if the pipeline wrote one.
                summary = await svc.call_tool("memory.get_session_summary",
                                              {"session": session_id},
                                              ToolScope(campaign, session_id))
                text = summary["results"][0]["text"] if summary["results"] else ""
            if not text:
                raise BotError(f"No recap for session '{session_id}' yet: the pipeline writes "
                               "it after the session ends.")
            playing = False
            if ctx.voice is not None and found is not None and interaction.guild_id is not None:
                playing = await ctx.voice.play(interaction.guild_id, found.audio_path)
            await send(interaction, embed=card(
                f"Previously… ({session_id})", text,
                footer="playing the audio recap" if playing else "",
            ))

    return recap
