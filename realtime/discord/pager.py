"""Long lists as one embed with previous / next buttons over `paging.paginate`'s pages."""

from __future__ import annotations

from collections.abc import Sequence

import discord

from realtime.discord.paging import EMBED_DESCRIPTION_LIMIT, clip, page_footer, paginate

COLOUR = discord.Colour.dark_teal()


def card(title: str, description: str = "", *, footer: str = "") -> discord.Embed:
    """The bot's one embed style; the description is clipped to Discord's limit."""
    embed = discord.Embed(
        title=clip(title, 256), description=clip(description, EMBED_DESCRIPTION_LIMIT) or None,
        colour=COLOUR,
    )
    if footer:
        embed.set_footer(text=clip(footer, 2048))
    return embed


class PagedView(discord.ui.View):
    """Pages of lines; anyone who sees the list may turn its pages (reading changes nothing)."""

    def __init__(self, title: str, lines: Sequence[str], *, max_lines: int = 15,
                 timeout_s: float = 600.0) -> None:
        super().__init__(timeout=timeout_s)
        self.title = title
        self.pages = paginate(lines, limit=EMBED_DESCRIPTION_LIMIT // 2, max_lines=max_lines)
        self.index = 0
        self._sync_buttons()

    def embed(self) -> discord.Embed:
        return card(self.title, self.pages[self.index],
                    footer=page_footer(self.index, len(self.pages)))

    def _sync_buttons(self) -> None:
        self.back.disabled = self.index == 0
        self.forward.disabled = self.index >= len(self.pages) - 1

    async def _turn(self, interaction: discord.Interaction, step: int) -> None:
        self.index = max(0, min(len(self.pages) - 1, self.index + step))
        self._sync_buttons()
        await interaction.response.edit_message(embed=self.embed(), view=self)

    @discord.ui.button(label="◀", style=discord.ButtonStyle.secondary)
    async def back(self, interaction: discord.Interaction, _: discord.ui.Button) -> None:
        await self._turn(interaction, -1)

    @discord.ui.button(label="▶", style=discord.ButtonStyle.secondary)
    async def forward(self, interaction: discord.Interaction, _: discord.ui.Button) -> None:
        await self._turn(interaction, 1)

    @property
    def paged(self) -> bool:
        return len(self.pages) > 1
