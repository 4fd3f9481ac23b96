"""A real MCP client (the official Python SDK, `mcp` on PyPI) for the tests.

usage: client.py stdio CWD COMMAND [ARG...]   launch the server over stdio
       client.py http URL                      connect to a streamable-HTTP server
       client.py session URL                   one long session over streamable HTTP

The stdio server inherits this process's environment. Reads the calls to
make from stdin, a JSON list of [tool, arguments], lists
the server's tools, makes the calls in order and prints one JSON transcript:
{"protocol", "server", "instructions", "tools": [...], "calls": [...]}.
"""

import asyncio
import json
import os
import sys

from mcp import Client, StdioServerParameters


def plain(value):
    """A pydantic model (or anything) as plain JSON data."""
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json", by_alias=True, exclude_none=True)
    return value


async def session(server, calls):
    async with Client(server, read_timeout_seconds=60) as client:
        listed = await client.list_tools()
        transcript = {
            "protocol": client.protocol_version,
            "server": plain(client.server_info),
            "instructions": client.instructions,
            "tools": [plain(tool) for tool in listed.tools],
            "calls": [],
        }
        for name, arguments in calls:
            result = await client.call_tool(name, arguments)
            transcript["calls"].append(
                {
                    "tool": name,
                    "arguments": arguments,
                    "is_error": bool(result.is_error),
                    "structured": result.structured_content,
                    "text": [plain(c).get("text") for c in result.content],
                }
            )
        return transcript


async def long_session(url):
    """One session held open while the test works: reads one JSON call
    [tool, arguments] per line of stdin, answers each with one JSON line
    {"is_error", "structured", "text"} (or {"failed": why} when the call
    itself failed), until stdin closes."""
    async with Client(url, read_timeout_seconds=60) as client:
        loop = asyncio.get_running_loop()
        while True:
            line = await loop.run_in_executor(None, sys.stdin.readline)
            if not line:
                return
            name, arguments = json.loads(line)
            try:
                result = await client.call_tool(name, arguments)
                answer = {
                    "is_error": bool(result.is_error),
                    "structured": result.structured_content,
                    "text": [plain(c).get("text") for c in result.content],
                }
            except Exception as e:  # noqa: BLE001 - reported to the test
                answer = {"failed": repr(e)}
            print(json.dumps(answer), flush=True)


def main():
    kind, rest = sys.argv[1], sys.argv[2:]
    if kind == "session":
        asyncio.run(long_session(rest[0]))
        return
    if kind == "stdio":
        cwd, command, args = rest[0], rest[1], rest[2:]
        # The server gets this process's whole environment (the test sets it).
        server = StdioServerParameters(command=command, args=args, cwd=cwd, env=dict(os.environ))
    elif kind == "http":
        server = rest[0]
    else:
        sys.exit(f"unknown transport {kind!r}: use stdio or http")
    calls = json.load(sys.stdin)
    print(json.dumps(asyncio.run(session(server, calls)), indent=2))


if __name__ == "__main__":
    main()
