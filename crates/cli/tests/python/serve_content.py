"""What a model reads through `kun-tools serve`, seen by the official MCP Python SDK.

Run by crates/cli/tests/python_content.rs with target/ci-venv/bin/python:

    serve_content.py SCENARIO --kun PATH --workspace DIR --config FILE [--client-name NAME]

FILE configures two real MCP servers: `mcp-server-time` as `time` (its tools declare an
output schema) and `@modelcontextprotocol/server-everything` under a long server key (its
`get-tiny-image` answers with an image). Scenarios (each exits 0 and prints `ok SCENARIO`):

* structured - a client named NAME (default: the SDK's own `mcp`) gets each tool's
  `outputSchema` and, on success, `structuredContent` that validates against it (the SDK
  validates too); errors carry `{code, error}` with the message as the text block. (For
  `claude-code`, only with `[serve] structured_content = "always"` in FILE.)
* text-only  - a client named NAME (`claude-code`, `codex-mcp-client`, or anyone with
  `structured_content = "never"`) gets neither `outputSchema` nor `structuredContent`: only
  the text block, which is the rendering.

Both: every advertised name is at most 54 characters, and the image comes as an image block.
Both wait until both servers' tools are listed (`serve` does not wait for them).
"""

import argparse
import base64
import json
import os

import anyio
import jsonschema
from mcp import types
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

TIMEOUT = 120
MAX_NAME = 54


def check(condition, message):
    if not condition:
        raise AssertionError(message)


def text_of(result):
    return "\n".join(block.text for block in result.content if block.type == "text")


def forwarded_env():
    keep = ("XDG_CONFIG_HOME", "XDG_STATE_HOME", "RUST_LOG", "PATH")
    return {key: os.environ[key] for key in keep if key in os.environ}


async def decline(context, params):
    return types.ElicitResult(action="decline")


async def with_session(args, body):
    server = StdioServerParameters(
        command=args.kun,
        args=["serve", "--workspace", args.workspace, "--config", args.config],
        env=forwarded_env(),
    )
    info = None
    if args.client_name:
        info = types.Implementation(name=args.client_name, version="1.0.0")
    async with stdio_client(server) as (read, write):
        async with ClientSession(
            read, write, elicitation_callback=decline, client_info=info
        ) as session:
            await session.initialize()
            await body(session)


def by_suffix(tools, suffix):
    found = [name for name in tools if name.endswith(suffix)]
    check(len(found) == 1, f"one tool ending in {suffix} expected: {sorted(tools)}")
    return tools[found[0]]


async def once_both_servers_are_listed(session):
    """MCP servers connect in the background: their tools arrive after `initialize`."""
    with anyio.fail_after(60):
        while True:
            listed = await session.list_tools()
            names = [tool.name for tool in listed.tools]
            if all(any(name.endswith(end) for name in names) for end in ("_get_tiny_image", "_get_current_time")):
                return listed
            await anyio.sleep(0.2)


async def common_checks(session):
    listed = await once_both_servers_are_listed(session)
    tools = {tool.name: tool for tool in listed.tools}
    for name in tools:
        check(len(name) <= MAX_NAME, f"{name} is {len(name)} characters, over {MAX_NAME}")
    check("read" in tools, f"read missing: {sorted(tools)}")

    image_tool = by_suffix(tools, "_get_tiny_image")
    image = await session.call_tool(image_tool.name, {})
    check(image.is_error is not True, f"{image_tool.name} failed: {image}")
    images = [block for block in image.content if block.type == "image"]
    check(len(images) == 1, f"no image block: {image.content}")
    check(images[0].mime_type == "image/png", f"image type: {images[0].mime_type}")
    png = base64.b64decode(images[0].data)
    check(png.startswith(b"\x89PNG"), "the image block does not hold a PNG")
    check(images[0].data not in text_of(image), "the image is also a text blob")
    return tools


async def structured(args):
    async def body(session):
        tools = await common_checks(session)
        for tool in tools.values():
            if tool.output_schema is not None:
                check(tool.output_schema.get("type") == "object", f"{tool.name}: {tool.output_schema}")
        time_tool = by_suffix(tools, "_get_current_time")
        schema = time_tool.output_schema
        check(schema is not None, f"{time_tool.name} lost its output schema")
        now = await session.call_tool(time_tool.name, {"timezone": "UTC"})
        check(now.is_error is not True, f"time failed: {now}")
        check(now.structured_content is not None, f"no structuredContent: {now}")
        jsonschema.validate(now.structured_content, schema)
        check(now.structured_content["timezone"] == "UTC", f"{now.structured_content}")
        check("UTC" in text_of(now), f"the text block: {text_of(now)!r}")

        read = await session.call_tool("read", {"path": "src/notes.txt"})
        check(read.is_error is not True, f"read failed: {read}")
        check("alpha" in text_of(read) and "gamma" in text_of(read), f"read: {text_of(read)!r}")
        read_schema = tools["read"].output_schema
        if read_schema is None:
            check(read.structured_content is None, f"structuredContent without a schema: {read}")
        else:
            jsonschema.validate(read.structured_content, read_schema)
            check(
                text_of(read) != json.dumps(read.structured_content),
                "the text block is the structured output, not a rendering",
            )

        missing = await session.call_tool("read", {"path": "src/missing.txt"})
        check(missing.is_error is True, f"reading a missing file succeeded: {missing}")
        output = missing.structured_content
        check(isinstance(output, dict) and isinstance(output.get("code"), str), f"no code: {missing}")
        check(text_of(missing).startswith(output["error"]), f"text: {text_of(missing)!r}")
        check(not text_of(missing).lstrip().startswith("{"), "an error's text is JSON")

    await with_session(args, body)


async def text_only(args):
    async def body(session):
        tools = await common_checks(session)
        with_schema = [tool.name for tool in tools.values() if tool.output_schema is not None]
        check(with_schema == [], f"{args.client_name} got output schemas: {with_schema}")
        time_tool = by_suffix(tools, "_get_current_time")
        now = await session.call_tool(time_tool.name, {"timezone": "UTC"})
        check(now.is_error is not True, f"time failed: {now}")
        check(now.structured_content is None, f"structuredContent sent: {now}")
        check("UTC" in text_of(now), f"the text block: {text_of(now)!r}")

        read = await session.call_tool("read", {"path": "src/notes.txt"})
        check(read.structured_content is None, f"structuredContent sent: {read}")
        check("alpha" in text_of(read), f"read: {text_of(read)!r}")

        missing = await session.call_tool("read", {"path": "src/missing.txt"})
        check(missing.is_error is True, f"reading a missing file succeeded: {missing}")
        check(missing.structured_content is None, f"structuredContent sent: {missing}")
        check(bool(text_of(missing)), "an error without words")
        check(not text_of(missing).lstrip().startswith("{"), "an error's text is JSON")

    await with_session(args, body)


SCENARIOS = {"structured": structured, "text-only": text_only}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("scenario", choices=sorted(SCENARIOS))
    parser.add_argument("--kun", required=True)
    parser.add_argument("--workspace", required=True)
    parser.add_argument("--config", required=True)
    parser.add_argument("--client-name")
    args = parser.parse_args()

    async def run():
        with anyio.fail_after(TIMEOUT):
            await SCENARIOS[args.scenario](args)

    anyio.run(run)
    print(f"ok {args.scenario}")


if __name__ == "__main__":
    main()
