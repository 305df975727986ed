"""Interop check of the example MCP server with the official Python MCP SDK (`mcp` on PyPI).

Driven by examples/tests/mcp_interop.rs; runnable by hand too:

    python tests/interop/mcp_client.py --stdio target/debug/mcp_server --stdio
    python tests/interop/mcp_client.py --http http://127.0.0.1:PORT/mcp
    python tests/interop/mcp_client.py --approvals target/debug/approvals FILE \
        --stdio target/debug/mcp_server --pending-store FILE --stdio

It lists the tools (all but `delete_document`, which the example's user lacks the capability
for and so is not shown), calls one that succeeds, one with bad arguments, the hidden one
(refused for the missing capability), one that needs approval, and an unknown tool. A second
session declares MCP elicitation and answers the server's approval questions: approve one e-mail
(it is sent), decline another (`APPROVAL_DENIED`). Both sessions negotiate 2025-11-25 by
`initialize`. A third client speaks 2026-07-28 (it probes `server/discover`, no handshake): the
list carries the cache hints, and the approval questions arrive as input requests in the call
results, answered on the SDK's automatic retry. Every `structuredContent` (errors
included) is checked against the tool's advertised `outputSchema` with `jsonschema`, on top of
the SDK's own check of successful results. With `--approvals CMD FILE` (the server keeping its
pending approvals in FILE), one more session without elicitation gets an `approval_id`,
approves it with the `approvals` command in another process, and retries the call: it runs,
once. Prints `PASS <check>` / `FAIL <check>: <why>` lines
and exits 1 if any check failed.
"""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import sys
import traceback
from typing import Any

import jsonschema
import mcp_types as types
from mcp import Client, ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

SEED_TOOLS = {
    "search_documents": "pure_read",
    "read_document_span": "pure_read",
    "create_draft_ticket": "reversible_write",
    "send_email": "irreversible_write",
    "delete_document": "irreversible_write",
}
HINTS = {
    "pure_read": (True, False, True, False),
    "reversible_write": (False, False, True, True),
    "irreversible_write": (False, True, True, True),
}
# What the example's user is shown: every tool it may call.
LISTED_TOOLS = set(SEED_TOOLS) - {"delete_document"}
CALL_TIMEOUT_S = 20.0

failures: list[str] = []


def check(name: str, condition: bool, why: str = "") -> None:
    if condition:
        print(f"PASS {name}", flush=True)
    else:
        failures.append(name)
        print(f"FAIL {name}: {why}", flush=True)


def schema_errors(schema: dict[str, Any], instance: Any) -> list[str]:
    validator_cls = jsonschema.validators.validator_for(schema)
    validator_cls.check_schema(schema)
    return [e.message for e in validator_cls(schema).iter_errors(instance)]


async def call(session: ClientSession, name: str, arguments: dict[str, Any]) -> Any:
    return await session.call_tool(name, arguments, read_timeout_seconds=CALL_TIMEOUT_S)


def check_envelope(label: str, schemas: dict[str, dict], tool: str, result: Any, ok: bool) -> dict:
    envelope = result.structured_content
    check(f"{label}.is_error", result.is_error is (not ok), f"is_error={result.is_error}")
    check(f"{label}.envelope_ok", isinstance(envelope, dict) and envelope.get("ok") is ok, repr(envelope)[:300])
    errors = schema_errors(schemas[tool], envelope)
    check(f"{label}.matches_output_schema", not errors, "; ".join(errors)[:500])
    texts = [c.text for c in result.content if getattr(c, "type", None) == "text"]
    check(f"{label}.text_block", len(texts) == 1 and 'trust="untrusted"' in texts[0], repr(texts)[:300])
    return envelope if isinstance(envelope, dict) else {}


async def scenario(session: ClientSession) -> None:
    init = await session.initialize()
    check("initialize.tools_capability", init.capabilities.tools is not None, repr(init.capabilities))
    check("initialize.version", init.protocol_version == "2025-11-25", repr(init.protocol_version))
    check(
        "initialize.list_changed",
        init.capabilities.tools is not None and init.capabilities.tools.list_changed is True,
        repr(init.capabilities.tools),
    )

    listed = await session.list_tools()
    tools = {t.name: t for t in listed.tools}
    check("list.names", set(tools) == LISTED_TOOLS, sorted(tools))
    schemas: dict[str, dict] = {}
    for name, effect in SEED_TOOLS.items():
        tool = tools.get(name)
        if tool is None:
            continue
        wire = tool.model_dump(by_alias=True, exclude_none=True)
        schemas[name] = wire.get("outputSchema", {})
        check(f"list.{name}.input_object", wire["inputSchema"].get("type") == "object", repr(wire["inputSchema"])[:200])
        check(f"list.{name}.output_object", schemas[name].get("type") == "object", repr(schemas[name])[:200])
        hints = wire.get("annotations", {})
        got = (hints.get("readOnlyHint"), hints.get("destructiveHint"), hints.get("idempotentHint"), hints.get("openWorldHint"))
        check(f"list.{name}.annotations", got == HINTS[effect], f"{got} != {HINTS[effect]}")
        meta = wire.get("_meta", {})
        check(
            f"list.{name}.meta",
            meta.get("dev.tool-contract/effect") == effect
            and str(meta.get("dev.tool-contract/fingerprint", "")).startswith("sha256:")
            and bool(meta.get("dev.tool-contract/version")),
            repr(meta),
        )

    # Success: the SDK itself validates structuredContent against outputSchema here, and raises
    # on a mismatch; we validate again below, errors included.
    result = await call(session, "search_documents", {"query": "refund policy"})
    envelope = check_envelope("call_ok", schemas, "search_documents", result, ok=True)
    items = envelope.get("data", {}).get("items", [])
    check("call_ok.data", any(i.get("source_id") == "policy/refund" for i in items), repr(items)[:300])

    result = await call(session, "search_documents", {"query": "refund", "top_k": 50})
    envelope = check_envelope("call_bad_args", schemas, "search_documents", result, ok=False)
    error = envelope.get("error", {})
    check("call_bad_args.category", error.get("category") == "INVALID_INPUT", repr(error)[:300])

    # Not listed, still answered as before. Its error envelope has the shape every tool's has,
    # so any listed tool's outputSchema checks it.
    schemas["delete_document"] = schemas.get("search_documents", {})
    result = await call(session, "delete_document", {"source_id": "policy/refund", "reason": "superseded by the 2026 policy"})
    envelope = check_envelope("call_denied_capability", schemas, "delete_document", result, ok=False)
    error = envelope.get("error", {})
    check("call_denied_capability.category", error.get("category") == "UNAUTHORIZED", repr(error)[:300])

    result = await call(session, "send_email", {"to": "lee@acme.test", "subject": "Refund policy", "body": "From 2026-07-01."})
    envelope = check_envelope("call_needs_approval", schemas, "send_email", result, ok=False)
    error = envelope.get("error", {})
    details = error.get("safe_details", {})
    check(
        "call_needs_approval.out_of_band",
        error.get("category") == "POLICY_DENIED"
        and error.get("code") == "APPROVAL_REQUIRED"
        and str(details.get("digest", "")).startswith("sha256:")
        and bool(details.get("how_to_approve")),
        repr(error)[:400],
    )

    try:
        await call(session, "no_such_tool", {})
        check("call_unknown.protocol_error", False, "no error raised")
    except MCPError as exc:
        data = exc.data if isinstance(exc.data, dict) else {}
        check(
            "call_unknown.protocol_error",
            exc.code == -32602 and data.get("error", {}).get("code") == "UNKNOWN_TOOL",
            f"{exc.code} {exc.message} {data!r}"[:300],
        )


async def approver(_context: Any, params: Any) -> Any:
    """Stands in for the user in front of the client: approves unless the question is about
    the e-mail whose subject says to decline."""
    message = getattr(params, "message", "")
    check("elicit.question", "send_email" in message and "sha256:" in message, message[:300])
    approve = "Please decline" not in message
    if approve:
        return types.ElicitResult(action="accept", content={"approve": True})
    return types.ElicitResult(action="decline")


async def approval_scenario(session: ClientSession) -> None:
    await session.initialize()
    listed = await session.list_tools()
    schema = next(t for t in listed.tools if t.name == "send_email").model_dump(by_alias=True)["outputSchema"]
    schemas = {"send_email": schema}
    email = {"to": "lee@acme.test", "subject": "Refund policy", "body": "From 2026-07-01."}
    result = await call(session, "send_email", email)
    envelope = check_envelope("elicit_approved", schemas, "send_email", result, ok=True)
    check("elicit_approved.sent", str(envelope.get("data", {}).get("message_id", "")).startswith("msg-"), repr(envelope)[:300])
    result = await call(session, "send_email", {**email, "subject": "Please decline"})
    envelope = check_envelope("elicit_declined", schemas, "send_email", result, ok=False)
    error = envelope.get("error", {})
    check("elicit_declined.denied", error.get("code") == "APPROVAL_DENIED", repr(error)[:300])


async def deferred_scenario(session: ClientSession, approvals: list[str]) -> None:
    """Out of band: the call waits under an id, another process approves it, the retry runs."""
    await session.initialize()
    listed = await session.list_tools()
    schema = next(t for t in listed.tools if t.name == "send_email").model_dump(by_alias=True)["outputSchema"]
    schemas = {"send_email": schema}
    email = {"to": "lee@acme.test", "subject": "Deferred", "body": "Approved out of band."}
    result = await call(session, "send_email", email)
    envelope = check_envelope("deferred_waiting", schemas, "send_email", result, ok=False)
    details = envelope.get("error", {}).get("safe_details", {})
    approval_id = str(details.get("approval_id", ""))
    check("deferred_waiting.approval_id", bool(approval_id), repr(details)[:400])
    command, store = approvals
    decided = subprocess.run(
        [command, "--store", store, "approve", approval_id, "--reason", "interop", "--as", "user:lee"],
        capture_output=True, text=True, timeout=CALL_TIMEOUT_S,
    )
    check("deferred_approved.command", decided.returncode == 0 and '"approved"' in decided.stdout, decided.stderr[:300])
    result = await call(session, "send_email", email)
    envelope = check_envelope("deferred_ran", schemas, "send_email", result, ok=True)
    check("deferred_ran.once", envelope.get("meta", {}).get("attempts") == 1, repr(envelope)[:300])
    result = await call(session, "send_email", email)
    envelope = check_envelope("deferred_replayed", schemas, "send_email", result, ok=True)
    check("deferred_replayed.replay", envelope.get("meta", {}).get("idempotency") == "replayed", repr(envelope)[:300])
async def modern_scenario(server: Any) -> None:
    """The 2026-07-28 revision with the SDK's high-level client, which negotiates it itself."""
    async with Client(server, elicitation_callback=approver, read_timeout_seconds=CALL_TIMEOUT_S) as client:
        check("modern.version", client.protocol_version == "2026-07-28", repr(client.protocol_version))
        listed = await client.list_tools()
        wire = listed.model_dump(by_alias=True, exclude_none=True)
        names = {t["name"] for t in wire.get("tools", [])}
        check("modern.list.names", names == LISTED_TOOLS, sorted(names))
        check(
            "modern.list.cache_hints",
            wire.get("ttlMs") == 0 and wire.get("cacheScope") == "private",
            repr({k: wire.get(k) for k in ("ttlMs", "cacheScope")}),
        )
        schemas = {t["name"]: t.get("outputSchema", {}) for t in wire.get("tools", [])}
        email = {"to": "lee@acme.test", "subject": "Refund policy, again", "body": "From 2026-07-01."}
        result = await client.call_tool("send_email", email)
        envelope = check_envelope("modern.approved", schemas, "send_email", result, ok=True)
        check("modern.approved.sent", str(envelope.get("data", {}).get("message_id", "")).startswith("msg-"), repr(envelope)[:300])
        result = await client.call_tool("send_email", {**email, "subject": "Please decline, again"})
        envelope = check_envelope("modern.declined", schemas, "send_email", result, ok=False)
        error = envelope.get("error", {})
        check("modern.declined.denied", error.get("code") == "APPROVAL_DENIED", repr(error)[:300])


def server_target(args: argparse.Namespace) -> Any:
    if args.stdio:
        return StdioServerParameters(command=args.stdio[0], args=args.stdio[1:])
    return args.http


def transport(args: argparse.Namespace) -> Any:
    if args.stdio:
        return stdio_client(StdioServerParameters(command=args.stdio[0], args=args.stdio[1:]))
    return streamable_http_client(args.http)


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--stdio", nargs=argparse.REMAINDER, metavar="CMD", help="server command line")
    group.add_argument("--http", metavar="URL", help="streamable HTTP endpoint")
    parser.add_argument("--approvals", nargs=2, metavar=("CMD", "FILE"), help="approval command and the server's pending store")
    args = parser.parse_args()
    async with transport(args) as (read, write):
        async with ClientSession(read, write) as session:
            await scenario(session)
    # A client that declared elicitation: the server asks it to approve.
    async with transport(args) as (read, write):
        async with ClientSession(read, write, elicitation_callback=approver) as session:
            await approval_scenario(session)
    if args.approvals:
        async with transport(args) as (read, write):
            async with ClientSession(read, write) as session:
                await deferred_scenario(session, args.approvals)
    await modern_scenario(server_target(args))
    print(f"SUMMARY {'FAIL' if failures else 'PASS'} failures={len(failures)}", flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    try:
        sys.exit(asyncio.run(asyncio.wait_for(main(), timeout=60)))
    except Exception:  # noqa: BLE001 - any crash is a failed interop run, reported as such
        traceback.print_exc()
        print("SUMMARY FAIL crashed", flush=True)
        sys.exit(1)
