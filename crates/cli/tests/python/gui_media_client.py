"""Drives `kun-tools serve`'s GUI and media tools with the official MCP Python SDK.

Run by crates/cli/tests/python_gui_media.rs with target/ci-venv/bin/python:

    gui_media_client.py SCENARIO --kun PATH --workspace DIR [--media-url URL]

Scenarios (each exits 0 and prints `ok SCENARIO`, or fails with a traceback):

* user-input   - `user_input` and `request_user_input` ask through elicitation: an enum form
                 for options, a text field otherwise, typed fields for request_user_input;
                 accept returns the answer, decline and cancel come back as such, an answer
                 the question did not allow is not an answer; neither tool asks for approval.
* no-elicitation - a client without the elicitation capability gets the clear error
                 "structured user input is not available in this client context".
* todos        - `--surface gui`: todo_write then a restarted `serve` sees the same todos
                 (the workspace's thread), `--thread other` does not; goals likewise.
* media        - each generation is approved through elicitation (policy on-request);
                 generate_image comes back as MCP image content, generate_speech as audio,
                 generate_video as a resource link, with MCP progress notifications
                 (strictly increasing) for the call that sent a progressToken.
* screenshot   - `[computer_use] mode = "always"` under the display in DISPLAY:
                 `computer_use {action: screenshot}` of a 1600x1000 screen is image content
                 (PNG, 1280x800) with the scale in the text, and asks nobody.
"""

import argparse
import base64
import os
import sys
from contextlib import asynccontextmanager

import anyio
from mcp import types
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

TIMEOUT = 120
UNAVAILABLE = "structured user input is not available in this client context"


def check(condition, message):
    if not condition:
        raise AssertionError(message)


def forwarded_env():
    keep = ("XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME", "RUST_LOG", "DISPLAY")
    return {key: os.environ[key] for key in keep if key in os.environ}


class Person:
    """An elicitation callback answering from a script and recording the forms."""

    def __init__(self):
        self.replies = []
        self.asked = []

    def reply(self, *replies):
        self.replies.extend(replies)

    async def __call__(self, context, params):
        self.asked.append(params)
        reply = self.replies.pop(0) if self.replies else ("cancel", None)
        action, content = reply
        if action == "accept":
            return types.ElicitResult(action="accept", content=content)
        return types.ElicitResult(action=action)


@asynccontextmanager
async def session(args, extra=(), elicitation=None):
    server = StdioServerParameters(
        command=args.kun,
        args=["serve", "--workspace", args.workspace, *extra],
        env=forwarded_env(),
    )
    async with stdio_client(server) as (read, write):
        async with ClientSession(read, write, elicitation_callback=elicitation) as client:
            await client.initialize()
            yield client


def schema_of(form):
    schema = form.requested_schema
    return schema if isinstance(schema, dict) else schema.model_dump(by_alias=True)


async def names(client):
    return {tool.name for tool in (await client.list_tools()).tools}


async def user_input(args):
    person = Person()
    async with session(args, elicitation=person) as client:
        listed = await names(client)
        for name in ("user_input", "request_user_input"):
            check(name in listed, f"{name} is not listed: {sorted(listed)}")

        person.reply(("accept", {"answer": "staging"}))
        result = await client.call_tool(
            "user_input", {"question": "Deploy where?", "options": ["staging", "prod"]}
        )
        check(result.is_error is False, f"answered user_input failed: {result}")
        check(result.structured_content["answer"] == "staging", f"answer: {result}")
        check("staging" in result.content[0].text, f"answer not in the text: {result}")
        check(len(person.asked) == 1, f"asked {len(person.asked)} times (approval asked too?)")
        form = person.asked[0]
        check("Deploy where?" in form.message, f"form message: {form.message}")
        props = schema_of(form)["properties"]
        check(len(props) == 1, f"one field expected: {props}")
        (field,) = props.values()
        check(field.get("enum") == ["staging", "prod"], f"not an enum of the options: {field}")

        person.reply(("accept", {"answer": "the moon"}))
        result = await client.call_tool(
            "user_input", {"question": "Deploy where?", "options": ["staging", "prod"]}
        )
        check("the moon" not in str(result.structured_content), f"unfit answer passed: {result}")
        check(result.structured_content["status"] == "cancelled", f"unfit answer: {result}")

        person.reply(("accept", {"answer": "blue"}))
        result = await client.call_tool("user_input", {"question": "Favourite colour?"})
        check(result.is_error is False, f"free-text user_input failed: {result}")
        check("blue" in result.content[0].text, f"text answer: {result}")
        (field,) = schema_of(person.asked[-1])["properties"].values()
        check(field["type"] == "string", f"free text is not a string field: {field}")

        person.reply(("decline", None))
        declined = await client.call_tool("user_input", {"question": "Proceed?"})
        check(declined.is_error is False, f"a decline is an answer, not a failure: {declined}")
        check(declined.structured_content["status"] == "declined", f"decline: {declined}")

        person.reply(("cancel", None))
        cancelled = await client.call_tool("user_input", {"question": "Proceed?"})
        check(cancelled.structured_content["status"] == "cancelled", f"cancel: {cancelled}")

        person.reply(("accept", {"name": "kun", "count": 3, "force": True}))
        fields = [
            {"name": "name", "title": "Name", "type": "text"},
            {"name": "count", "title": "How many", "type": "number"},
            {"name": "force", "title": "Force", "type": "boolean"},
        ]
        result = await client.call_tool("request_user_input", {"fields": fields})
        check(result.is_error is False, f"request_user_input failed: {result}")
        schema = schema_of(person.asked[-1])
        types_ = {name: prop["type"] for name, prop in schema["properties"].items()}
        check(
            types_ == {"name": "string", "count": "number", "force": "boolean"},
            f"request_user_input form: {schema}",
        )
        values = result.structured_content["values"]
        check(values == {"name": "kun", "count": 3, "force": True}, f"values: {result}")


async def no_elicitation(args):
    async with session(args) as client:
        result = await client.call_tool("user_input", {"question": "Proceed?"})
        check(result.is_error is True, f"not an error without elicitation: {result}")
        check(UNAVAILABLE in result.content[0].text, f"message: {result.content[0].text}")
        check(
            result.structured_content.get("code") == "user_input_unavailable",
            f"code: {result.structured_content}",
        )


async def todos(args):
    items = [
        {"content": "write the parser", "status": "in_progress"},
        {"content": "test it", "status": "pending"},
    ]
    async with session(args, ["--surface", "gui"]) as client:
        listed = await names(client)
        for name in ("todo_list", "todo_write", "get_goal", "create_goal", "update_goal"):
            check(name in listed, f"{name} not listed for the gui surface: {sorted(listed)}")
        result = await client.call_tool("todo_write", {"todos": items})
        check(result.is_error is False, f"todo_write: {result}")
        result = await client.call_tool("create_goal", {"objective": "ship v2"})
        check(result.is_error is False, f"create_goal: {result}")
    async with session(args) as client:
        listed = await names(client)
        check("todo_list" not in listed, "todo tools listed for the cli surface")
    async with session(args, ["--surface", "gui"]) as client:
        result = await client.call_tool("todo_list", {})
        check("write the parser" in str(result.structured_content), f"restart lost: {result}")
        goal = await client.call_tool("get_goal", {})
        check("ship v2" in str(goal.structured_content), f"goal lost: {goal}")
    async with session(args, ["--surface", "gui", "--thread", "other"]) as client:
        result = await client.call_tool("todo_list", {})
        check("write the parser" not in str(result.structured_content), f"leaked: {result}")


async def media(args):
    progress = []

    async def on_progress(value, total, message):
        progress.append((value, total, message))

    person = Person()
    person.reply(*[("accept", {"decision": "allow"})] * 3)
    async with session(args, elicitation=person) as client:
        listed = await names(client)
        for name in ("generate_image", "generate_speech", "generate_video"):
            check(name in listed, f"{name} not listed: {sorted(listed)}")
        check("generate_music" not in listed, "an unconfigured generator is listed")

        image = await client.call_tool("generate_image", {"prompt": "a red square"})
        check(image.is_error is False, f"generate_image: {image}")
        blocks = [b for b in image.content if b.type == "image"]
        check(len(blocks) == 1, f"no image content: {image.content}")
        png = base64.b64decode(blocks[0].data)
        check(png.startswith(b"\x89PNG"), "the image block is not a PNG")
        check(blocks[0].mime_type == "image/png", f"mime: {blocks[0].mime_type}")

        speech = await client.call_tool("generate_speech", {"text": "hello"})
        check(speech.is_error is False, f"generate_speech: {speech}")
        blocks = [b for b in speech.content if b.type == "audio"]
        check(len(blocks) == 1, f"no audio content: {speech.content}")
        check(base64.b64decode(blocks[0].data).startswith(b"RIFF"), "not a WAV")

        video = await client.call_tool(
            "generate_video", {"prompt": "waves"}, progress_callback=on_progress
        )
        check(video.is_error is False, f"generate_video: {video}")
        links = [b for b in video.content if b.type == "resource_link"]
        check(len(links) == 1, f"no resource link: {video.content}")
        check(str(links[0].uri).startswith("file://"), f"link: {links[0].uri}")
        path = str(links[0].uri)[len("file://"):]
        with open(path, "rb") as f:
            check(f.read() == b"VIDEO-BYTES", "the linked file is not the video")
        check(len(progress) >= 2, f"too few progress notifications: {progress}")
        values = [p[0] for p in progress]
        check(values == sorted(set(values)), f"progress not strictly increasing: {values}")
        # Network-backed, policy on-request: each generation was approved first.
        check(len(person.asked) == 3, f"expected three approvals: {person.asked}")
        check(all("decision" in schema_of(f)["properties"] for f in person.asked), "not approvals")


async def screenshot(args):
    person = Person()
    async with session(args, elicitation=person) as client:
        check("computer_use" in await names(client), "computer_use not listed in mode always")
        result = await client.call_tool("computer_use", {"action": "screenshot"})
        check(result.is_error is False, f"screenshot: {result}")
        images = [b for b in result.content if b.type == "image"]
        check(len(images) == 1, f"no image content: {result.content}")
        png = base64.b64decode(images[0].data)
        check(png.startswith(b"\x89PNG"), "not a PNG")
        width = int.from_bytes(png[16:20], "big")
        height = int.from_bytes(png[20:24], "big")
        check((width, height) == (1280, 800), f"not scaled to 1280 wide: {width}x{height}")
        texts = " ".join(b.text for b in result.content if b.type == "text")
        check("scale" in texts, f"no scale factor in the text: {texts}")
        check(person.asked == [], "a screenshot asked for approval")


SCENARIOS = {
    "user-input": user_input,
    "no-elicitation": no_elicitation,
    "todos": todos,
    "media": media,
    "screenshot": screenshot,
}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("scenario", choices=sorted(SCENARIOS))
    parser.add_argument("--kun", required=True)
    parser.add_argument("--workspace", required=True)
    args = parser.parse_args()

    async def run():
        with anyio.fail_after(TIMEOUT):
            await SCENARIOS[args.scenario](args)

    anyio.run(run)
    print(f"ok {args.scenario}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
