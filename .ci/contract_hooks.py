"""Schemathesis hooks of the contract run (.ci/contract.py loads them through SCHEMATHESIS_HOOKS)."""

from __future__ import annotations

from typing import Any

import schemathesis

# wait_for_connection long-polls for up to timeout_s (5 to 600 s) when the platform has no account (the store
# platforms never do): a generated wait, or the default one (120 s), is cut to the shortest the tool accepts,
# to keep the run bounded.
SHORTEST_WAIT = 5


@schemathesis.hook
def before_call(context: schemathesis.HookContext, case: schemathesis.Case[Any], kwargs: dict[str, Any]) -> None:
    if case.operation.label != "POST /tools/wait_for_connection" or not isinstance(case.body, dict):
        return
    timeout = case.body.get("timeout_s", SHORTEST_WAIT + 1)
    # 264.0 is an integer to the tool too; booleans are not.
    if isinstance(timeout, int | float) and not isinstance(timeout, bool) and timeout > SHORTEST_WAIT:
        case.body["timeout_s"] = SHORTEST_WAIT
