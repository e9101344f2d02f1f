"""The bot's settings: token, which campaign each guild runs, who counts as the DM.

The token is kept out of `repr` and every message: a token in a log is a stolen bot.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field

TOKEN_ENV = "GLYPHOXA_DISCORD_TOKEN"
CAMPAIGN_ENV = "GLYPHOXA_DISCORD_CAMPAIGN"
GUILDS_ENV = "GLYPHOXA_DISCORD_GUILDS"
DM_ROLE_ENV = "GLYPHOXA_DISCORD_DM_ROLE"
DEFAULT_DM_ROLE = "DM"


class BotConfigError(ValueError):
    """A setting the bot cannot start with; the message says which and how to fix it."""


def parse_guild_map(spec: str) -> dict[int, str]:
    """`"<guild id>=<campaign id>,..."` -> {guild id: campaign id}."""
    out: dict[int, str] = {}
    for item in spec.split(","):
        item = item.strip()
        if not item:
            continue
        guild, sep, campaign = item.partition("=")
        if not sep or not guild.strip().isdigit() or not campaign.strip():
            raise BotConfigError(
                f"guild map entry {item!r}: expected <guild id>=<campaign id>, "
                "e.g. 123456789012345678=shattered-crown"
            )
        out[int(guild.strip())] = campaign.strip()
    return out


@dataclass(frozen=True)
class BotConfig:
    token: str = field(repr=False)
    # One guild runs one campaign; guilds not listed run `default_campaign` (when set).
    guild_campaigns: Mapping[int, str] = field(default_factory=dict)
    default_campaign: str | None = None
    dm_role: str = DEFAULT_DM_ROLE

    def campaign_for(self, guild_id: int | None) -> str | None:
        if guild_id is None:
            return None
        return self.guild_campaigns.get(guild_id, self.default_campaign)

    @classmethod
    def from_env(
        cls,
        env: Mapping[str, str] | None = None,
        *,
        campaign: str | None = None,
        guilds: str | None = None,
        dm_role: str | None = None,
    ) -> BotConfig:
        """Options given on the command line win over the environment."""
        env = os.environ if env is None else env
        token = (env.get(TOKEN_ENV) or "").strip()
        if not token:
            raise BotConfigError(
                f"no Discord bot token: set {TOKEN_ENV} to the token of your application's "
                "bot (Discord developer portal > your application > Bot > Reset Token)"
            )
        default = campaign or env.get(CAMPAIGN_ENV) or None
        mapping = parse_guild_map(guilds if guilds is not None else env.get(GUILDS_ENV, ""))
        if default is None and not mapping:
            raise BotConfigError(
                f"no campaign for the bot: set {CAMPAIGN_ENV} (every guild runs that campaign) "
                f"or {GUILDS_ENV}=<guild id>=<campaign id>,... (or --campaign / --guilds)"
            )
        return cls(
            token=token,
            guild_campaigns=mapping,
            default_campaign=default,
            dm_role=dm_role or env.get(DM_ROLE_ENV) or DEFAULT_DM_ROLE,
        )
