"""A minimal MCP client for `harmonia serve`, with the official MCP Python SDK.

    pip install mcp            # or: scripts/install-test-deps.sh, then target/test-deps/venv/bin/python

    # local: the client starts the server over stdio
    python examples/mcp_client.py stdio target/debug/harmonia

    # remote: streamable HTTP with a bearer token (harmonia serve token add ...)
    HARMONIA_TOKEN=hmt_... python examples/mcp_client.py http http://127.0.0.1:8080/mcp

It lists the tools the credential allows, calls `get_job_status` for
`job-7`, and prints the envelope (the result's structuredContent).
"""

import asyncio
import json
import os
import sys

import httpx2
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client


def connect(kind, target):
    if kind == "stdio":
        return Client(StdioServerParameters(command=target, args=["serve", "--stdio", "--mock", "--workspace", "ws_demo"]))
    headers = {"Authorization": f"Bearer {os.environ['HARMONIA_TOKEN']}"}
    return Client(streamable_http_client(target, http_client=httpx2.AsyncClient(headers=headers, timeout=60)))


async def main(kind, target):
    async with connect(kind, target) as client:
        tools = (await client.list_tools()).tools
        print("tools:", ", ".join(tool.name for tool in tools))
        result = await client.call_tool("get_job_status", {"job_id": "job-7"})
        envelope = result.structured_content
        print("isError:", result.is_error)
        print(json.dumps(envelope, indent=2))


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("stdio", "http"):
        sys.exit(__doc__)
    asyncio.run(main(sys.argv[1], sys.argv[2]))
