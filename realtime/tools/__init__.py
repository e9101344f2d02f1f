"""The memory tools: `registry` (names, schemas, validation), `args` (their inputs), `tiers`
(which tools a turn is shown), `scope` (who asks), `results` (the shapes answers take),
`dispatch` (validate, run, time) and one module per tool.

This package's top level re-exports only the leaf parts (no database, no search) so the HTTP
API, MCP and the CLI can name tools cheaply; import `realtime.tools.dispatch` to run them.
"""

from realtime.tools.args import (
    GetRecapArgs,
    GetSessionSummaryArgs,
    QueryEntitiesArgs,
    SearchFactsArgs,
    SearchGraphArgs,
    SearchSessionsArgs,
    ToolArgs,
)
from realtime.tools.registry import (
    TOOLS,
    ToolInputError,
    ToolSpec,
    UnknownToolError,
    get_spec,
    validate,
)
from realtime.tools.scope import ToolScope
from realtime.tools.tiers import (
    DEEP_REQUEST,
    TIER_BUDGET_MS,
    LatencyTracker,
    Tier,
    TierDecision,
    select_tier,
    tools_for_tier,
)

__all__ = [
    "DEEP_REQUEST",
    "TIER_BUDGET_MS",
    "TOOLS",
    "GetRecapArgs",
    "GetSessionSummaryArgs",
    "LatencyTracker",
    "QueryEntitiesArgs",
    "SearchFactsArgs",
    "SearchGraphArgs",
    "SearchSessionsArgs",
    "Tier",
    "TierDecision",
    "ToolArgs",
    "ToolInputError",
    "ToolScope",
    "ToolSpec",
    "UnknownToolError",
    "get_spec",
    "select_tier",
    "tools_for_tier",
    "validate",
]
