"""The NPC's running conversation, kept inside the model's context window.

Tokens are estimated at 4 characters per token (no tokenizer on the voice path: the estimate
only has to trigger compaction in time, not count exactly). When the estimate reaches
`compact_at` (75 %) of the window, the oldest half of the messages is summarised and kept as
a `[Previous conversation summary]` prefix; summaries accumulate in order, so the story so far
reads front to back.

Every message also enters an append-only log with a sequence number, which compaction does
not touch: the `Consolidator` writes from that log, so a message summarised away before it
reached L1 is still written. Summary messages are synthetic: they are never written to L1.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any, Literal

from realtime.voice.summarizer import ExtractiveSummarizer, Summarizer

CHARS_PER_TOKEN = 4
SUMMARY_PREFIX = "[Previous conversation summary]"

Role = Literal["player", "npc", "dm", "system"]


@dataclass(slots=True)
class ConversationMessage:
    """One thing said in the conversation, as the log keeps it."""

    seq: int
    role: Role
    content: str
    speaker_id: str = ""
    speaker_name: str = ""
    npc_id: str | None = None
    idempotency_key: str = field(default_factory=lambda: f"voice-{uuid.uuid4().hex}")
    synthetic: bool = False  # a summary: context only, never written to L1
    in_l1: bool = False  # already written (the loop writes player lines inline)

    def chat(self) -> dict[str, Any]:
        """The message in the chat completions shape (the NPC is the assistant)."""
        if self.role == "npc":
            return {"role": "assistant", "content": self.content}
        who = self.speaker_name or self.speaker_id or self.role
        return {"role": "user", "content": f"{who}: {self.content}"}


def estimate_tokens(text: str) -> int:
    return (len(text) + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN


class ContextManager:
    def __init__(
        self,
        window_tokens: int = 8_192,
        *,
        summarizer: Summarizer | None = None,
        compact_at: float = 0.75,
    ) -> None:
        self.window_tokens = window_tokens
        self.compact_at = compact_at
        self.summarizer = summarizer or ExtractiveSummarizer()
        self.summaries: list[str] = []
        self._window: list[ConversationMessage] = []
        self._log: list[ConversationMessage] = []
        self._next_seq = 1

    # -- adding --------------------------------------------------------------------------
    def add(self, role: Role, content: str, **fields: Any) -> ConversationMessage:
        message = ConversationMessage(self._next_seq, role, content, **fields)
        self._next_seq += 1
        self._window.append(message)
        self._log.append(message)
        return message

    # -- the window ----------------------------------------------------------------------
    @property
    def window(self) -> list[ConversationMessage]:
        return list(self._window)

    def summary_text(self) -> str:
        return "\n\n".join([SUMMARY_PREFIX, *self.summaries]) if self.summaries else ""

    def tokens(self, system: str = "") -> int:
        """The estimate for `system` + the summary prefix + the live messages."""
        text = system + self.summary_text() + "".join(m.content for m in self._window)
        return estimate_tokens(text)

    def messages(self, system: str) -> list[dict[str, Any]]:
        """What the model reads: the system prompt, the summaries, then the messages."""
        out: list[dict[str, Any]] = [{"role": "system", "content": system}]
        if self.summaries:
            out.append({"role": "system", "content": self.summary_text()})
        out.extend(m.chat() for m in self._window)
        return out

    async def compact_if_needed(self, system: str = "") -> bool:
        """Summarise the oldest half when the estimate reaches the threshold; True if it did.

        `system` counts because it shares the window (the hot context is most of it)."""
        if self.tokens(system) < self.compact_at * self.window_tokens or len(self._window) < 2:
            return False
        half = len(self._window) // 2
        oldest, self._window = self._window[:half], self._window[half:]
        summary = (await self.summarizer.summarize([m.chat() for m in oldest])).strip()
        if summary:
            self.summaries.append(summary)
            self._log.append(ConversationMessage(self._next_seq, "system", summary,
                                                 synthetic=True, in_l1=True))
            self._next_seq += 1
        return True

    # -- the log, for the Consolidator ---------------------------------------------------
    def since(self, seq: int) -> list[ConversationMessage]:
        """Logged messages after `seq`, oldest first."""
        return [m for m in self._log if m.seq > seq]

    def forget_through(self, seq: int) -> None:
        """Drop log entries up to `seq` (consolidated) so the log does not grow all session;
        the window keeps its own references."""
        self._log = [m for m in self._log if m.seq > seq]
