"""Drives `kun-tools serve` with the official MCP Python SDK (the `mcp` package).

Run by crates/cli/tests/python_sdk.rs with target/ci-venv/bin/python:

    serve_client.py SCENARIO --kun PATH --workspace DIR [--url URL] [--token TOKEN]

Scenarios (each exits 0 and prints `ok SCENARIO`, or fails with a traceback):

* approvals - lists the tools, reads a file, is asked through elicitation before `write`:
  deny and decline leave the file untouched (`approval_denied`), allow writes it,
  allow_for_session is asked once for two writes; an unknown tool is a protocol error.
* never     - the workspace config says approval = "never": `write` is
  `approval_policy_blocked` and nobody is asked.
* fallback  - a client without elicitation gets approval_fallback: deny by default, allow
  with --approval-fallback allow.
* reload    - changing .kun/config.toml while serving sends tools/list_changed and the next
  tools/list follows it.
* slow-server - serve with --config naming an MCP server that takes seconds to start:
  initialize and tools/list answer at once (under a second), then tools/list_changed brings
  the server's tools (`mcp_slow_echo`), which answer.
* http      - streamable HTTP at --url, with --token as the bearer token; closing the session
              (DELETE) must not make the SDK log "Session termination failed".
* http-refused - the same URL with a wrong token: the client cannot connect.
"""

import argparse
import json
import time
import logging
import os
import pathlib
import sys
from contextlib import asynccontextmanager

import anyio
from mcp import types
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError

TIMEOUT = 120
INVALID_PARAMS = -32602


def check(condition, message):
    if not condition:
        raise AssertionError(message)


class Approver:
    """An elicitation callback that answers from a script and records what it was asked."""

    def __init__(self):
        self.answers = []
        self.asked = []

    def answer(self, *decisions):
        self.answers.extend(decisions)

    async def __call__(self, context, params):
        self.asked.append(params)
        decision = self.answers.pop(0) if self.answers else "deny"
        if decision in ("decline", "cancel"):
            return types.ElicitResult(action=decision)
        return types.ElicitResult(action="accept", content={"decision": decision})


def forwarded_env():
    keep = ("XDG_CONFIG_HOME", "XDG_STATE_HOME", "RUST_LOG")
    return {key: os.environ[key] for key in keep if key in os.environ}


@asynccontextmanager
async def stdio_session(args, extra=(), elicitation=None, messages=None):
    server = StdioServerParameters(
        command=args.kun,
        args=["serve", "--workspace", args.workspace, *extra],
        env=forwarded_env(),
    )
    async with stdio_client(server) as (read, write):
        async with ClientSession(
            read, write, elicitation_callback=elicitation, message_handler=messages
        ) as session:
            await session.initialize()
            yield session


def text_of(result):
    """What the model reads: the text blocks, joined."""
    return "\n".join(block.text for block in result.content if block.type == "text")


def structured(result):
    """The structured part, checked against the text block (the model's reading, never
    empty; an error's message first): an error's `{code, error, ...}`, a success's
    structuredContent (`None` when the tool declares no output schema)."""
    check(len(result.content) >= 1, f"no content blocks: {result}")
    text = text_of(result)
    check(bool(text), "the text block is empty")
    if result.is_error:
        check(result.structured_content is not None, f"an error without its code: {result}")
        message = result.structured_content.get("error")
        check(isinstance(message, str), f"an error without a message: {result}")
        check(text.startswith(message), f"the text block does not start with the error: {text!r}")
    return result.structured_content


async def tools_by_name(session):
    listed = await session.list_tools()
    names = [tool.name for tool in listed.tools]
    check(names == sorted(names), f"tools/list is not sorted: {names}")
    return {tool.name: tool for tool in listed.tools}


async def write(session, path, content="x"):
    return await session.call_tool("write", {"path": path, "content": content})


async def approvals(args):
    workspace = pathlib.Path(args.workspace)
    approver = Approver()
    async with stdio_session(args, elicitation=approver) as session:
        tools = await tools_by_name(session)
        for name in ("read", "grep", "glob", "write", "edit", "bash"):
            check(name in tools, f"{name} missing from tools/list: {sorted(tools)}")
        check("find" not in tools, "find is an unadvertised alias")
        read = tools["read"]
        check(read.annotations.read_only_hint is True, f"read annotations: {read.annotations}")
        check(read.input_schema["type"] == "object", f"read schema: {read.input_schema}")
        check("path" in read.input_schema["properties"], "read schema has no path")
        check(tools["write"].annotations.destructive_hint is True, "write is not destructive")
        check(tools["write"].annotations.read_only_hint is False, "write claims read-only")
        check(tools["bash"].annotations.destructive_hint is True, "bash is not destructive")

        result = await session.call_tool("read", {"path": "src/notes.txt"})
        check(result.is_error is False, f"read failed: {result}")
        structured(result)
        check("alpha" in text_of(result) and "gamma" in text_of(result), f"read: {result}")
        check(approver.asked == [], "a read-only tool asked for approval")

        approver.answer("deny")
        denied = await write(session, "src/new.txt")
        check(denied.is_error is True, f"a denied write is not an error: {denied}")
        check(structured(denied)["code"] == "approval_denied", f"denied: {denied}")
        check(len(approver.asked) == 1, f"asked {len(approver.asked)} times, expected once")
        form = approver.asked[0]
        check("write" in form.message, f"the prompt does not name the tool: {form.message}")
        schema = form.requested_schema
        schema = schema if isinstance(schema, dict) else schema.model_dump(by_alias=True)
        check(schema["required"] == ["decision"], f"form: {schema}")
        check(
            schema["properties"]["decision"]["enum"] == ["allow", "allow_for_session", "deny"],
            f"form: {schema}",
        )
        check(not (workspace / "src/new.txt").exists(), "the file was written after a deny")

        approver.answer("decline")
        declined = await write(session, "src/new.txt")
        check(structured(declined)["code"] == "approval_denied", f"declined: {declined}")
        check(not (workspace / "src/new.txt").exists(), "the file was written after a decline")

        approver.answer("allow")
        allowed = await write(session, "src/new.txt", "allowed")
        check(allowed.is_error is False, f"an allowed write failed: {allowed}")
        check((workspace / "src/new.txt").read_text() == "allowed", "the allowed write is missing")

        asked_before = len(approver.asked)
        approver.answer("allow_for_session")
        first = await write(session, "src/one.txt")
        second = await write(session, "src/two.txt")
        check(first.is_error is False and second.is_error is False, "session-granted writes failed")
        check(len(approver.asked) == asked_before + 1, "allow_for_session asked more than once")

        try:
            await session.call_tool("teleport", {})
        except MCPError as err:
            check(err.code == INVALID_PARAMS, f"unknown tool gave code {err.code}")
            check("teleport" in err.message, f"the error does not name the tool: {err.message}")
        else:
            raise AssertionError("an unknown tool did not raise a protocol error")


async def never(args):
    workspace = pathlib.Path(args.workspace)
    approver = Approver()
    async with stdio_session(args, elicitation=approver) as session:
        blocked = await write(session, "src/new.txt")
        check(blocked.is_error is True, f"not an error: {blocked}")
        check(structured(blocked)["code"] == "approval_policy_blocked", f"blocked: {blocked}")
        check(approver.asked == [], "approval = never still asked")
        check(not (workspace / "src/new.txt").exists(), "the file was written under never")
        # SPEC §6: `never` blocks every tool policy, read-only ones included.
        read = await session.call_tool("read", {"path": "src/notes.txt"})
        check(structured(read)["code"] == "approval_policy_blocked", f"read under never: {read}")


async def fallback(args):
    workspace = pathlib.Path(args.workspace)
    async with stdio_session(args) as session:
        denied = await write(session, "src/new.txt")
        output = structured(denied)
        check(output["code"] == "approval_denied", f"fallback deny: {denied}")
        check("elicitation" in output["error"], f"the reason does not say why: {output}")
        check(not (workspace / "src/new.txt").exists(), "written without approval")
    async with stdio_session(args, extra=["--approval-fallback", "allow"]) as session:
        allowed = await write(session, "src/new.txt", "by fallback")
        check(allowed.is_error is False, f"fallback allow: {allowed}")
        check((workspace / "src/new.txt").read_text() == "by fallback", "fallback allow wrote nothing")


async def reload(args):
    config = pathlib.Path(args.workspace) / ".kun" / "config.toml"
    changed = anyio.Event()

    async def on_message(message):
        if isinstance(message, types.ToolListChangedNotification):
            changed.set()

    async with stdio_session(args, messages=on_message) as session:
        check("write" in await tools_by_name(session), "write missing before the reload")
        config.parent.mkdir(parents=True, exist_ok=True)
        config.write_text('[tools]\ndeny = ["write"]\n')
        with anyio.fail_after(60):
            await changed.wait()
        tools = await tools_by_name(session)
        check("write" not in tools, f"write still listed after the reload: {sorted(tools)}")
        check("read" in tools, "read vanished after the reload")
        try:
            await write(session, "src/new.txt")
        except MCPError as err:
            check(err.code == INVALID_PARAMS, f"a denied tool gave code {err.code}")
        else:
            raise AssertionError("a tool removed by the reload was still callable")


async def slow_server(args):
    changed = anyio.Event()

    async def on_message(message):
        if isinstance(message, types.ToolListChangedNotification):
            changed.set()

    started = time.monotonic()
    async with stdio_session(args, extra=["--config", args.config], messages=on_message) as session:
        tools = await tools_by_name(session)
        took = time.monotonic() - started
        print(f"initialize + tools/list with a slow MCP server configured: {took * 1000:.0f} ms")
        check(took < 1.0, f"serve waited for the MCP server: {took:.2f} s")
        check("read" in tools, "read missing")
        check("mcp_slow_echo" not in tools, "the slow server's tools came too early")
        with anyio.fail_after(60):
            while "mcp_slow_echo" not in tools:
                await changed.wait()
                changed = anyio.Event()
                tools = await tools_by_name(session)
        check(time.monotonic() - started >= 3.0, "the server's tools came before it started")
        echoed = await session.call_tool("mcp_slow_echo", {"text": "from python"})
        check(echoed.is_error is False, f"mcp_slow_echo failed: {echoed}")
        check("from python" in text_of(echoed), f"mcp_slow_echo said {echoed}")


@asynccontextmanager
async def http_session(url, token):
    headers = {"Authorization": f"Bearer {token}"} if token else None
    async with create_mcp_http_client(headers=headers) as client:
        async with streamable_http_client(url, http_client=client) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                yield session


class Warnings(logging.Handler):
    """Collects the SDK's warnings (e.g. "Session termination failed: 202")."""

    def __init__(self):
        super().__init__(logging.WARNING)
        self.messages = []

    def emit(self, record):
        self.messages.append(record.getMessage())


async def http(args):
    warnings = Warnings()
    logging.getLogger("mcp").addHandler(warnings)
    async with http_session(args.url, args.token) as session:
        tools = await tools_by_name(session)
        check("read" in tools, f"read missing over HTTP: {sorted(tools)}")
        result = await session.call_tool("read", {"path": "src/notes.txt"})
        structured(result)
        check("gamma" in text_of(result), f"read over HTTP: {result}")
    # Leaving the block sent DELETE: the server must answer it in a way the SDK accepts.
    check(
        not any("termination" in m for m in warnings.messages),
        f"closing the session logged: {warnings.messages}",
    )


async def http_refused(args):
    try:
        with anyio.fail_after(60):
            async with http_session(args.url, args.token) as session:
                await session.list_tools()
    except TimeoutError:
        raise AssertionError("the refused client hung instead of failing")
    except BaseException as err:  # the SDK reports the 401 as an error (or an error group)
        print(f"refused as expected: {type(err).__name__}: {err}", file=sys.stderr)
        return
    raise AssertionError("a client with a wrong token could use the server")


SCENARIOS = {
    "approvals": approvals,
    "never": never,
    "fallback": fallback,
    "reload": reload,
    "slow-server": slow_server,
    "http": http,
    "http-refused": http_refused,
}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("scenario", choices=sorted(SCENARIOS))
    parser.add_argument("--kun")
    parser.add_argument("--workspace")
    parser.add_argument("--url")
    parser.add_argument("--token")
    parser.add_argument("--config")
    args = parser.parse_args()

    async def run():
        with anyio.fail_after(TIMEOUT):
            await SCENARIOS[args.scenario](args)

    anyio.run(run)
    print(f"ok {args.scenario}")


if __name__ == "__main__":
    main()
