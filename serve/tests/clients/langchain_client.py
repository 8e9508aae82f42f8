"""LangChain's MCP adapters (`langchain-mcp-adapters`) against `harmonia
serve`: the tools loaded as LangChain tools and invoked as an agent's tool
node would (a tool call in, a `ToolMessage` out), no model needed.

  python langchain_client.py stdio CMD ARG...  `MultiServerMCPClient` starting
                                               `harmonia serve --stdio`
  python langchain_client.py http URL TOKEN    streamable HTTP, a bearer header
  python langchain_client.py skill URL TOKEN   a skill route: tools loaded on
                                               one MCP session
                                               (`client.session` and
                                               `load_mcp_tools`), where the
                                               guard refuses the second call,
                                               and the signed trace

Runs in its own virtual environment (target/test-deps/venv-langchain):
every release of the adapters needs the MCP Python SDK 1.x. Prints the
protocol revision negotiated and "scenario NAME passed", or fails with the
reason.
"""

import asyncio
import json
import os
import sys

from langchain_mcp_adapters.client import MultiServerMCPClient
from langchain_mcp_adapters.tools import load_mcp_tools

JOB = {"job_id": "job-7"}
calls = 0


async def invoke(tool, arguments):
    """Invoke `tool` with a tool call, as LangGraph's tool node does: the
    ToolMessage's status and the envelope in its text (and, on success,
    its artifact's structured content)."""
    global calls
    calls += 1
    message = await tool.ainvoke({"type": "tool_call", "id": f"call-{calls}", "name": tool.name, "args": arguments})
    content = message.content
    text = content if isinstance(content, str) else "".join(block["text"] for block in content)
    envelope = json.loads(text)
    if message.status == "success":
        assert message.artifact["structured_content"] == envelope, message
    return message.status, envelope


def by_name(tools):
    return {tool.name: tool for tool in tools}


async def protocol(client):
    async with client.session("harmonia", auto_initialize=False) as session:
        initialized = await session.initialize()
    print(f"protocol {initialized.protocolVersion}")


async def tools_and_calls(client, expected):
    tools = by_name(await client.get_tools())
    assert sorted(tools) == expected, sorted(tools)
    assert tools["get_job_status"].metadata["readOnlyHint"] is True, tools["get_job_status"].metadata
    status, envelope = await invoke(tools["get_job_status"], JOB)
    assert status == "success" and envelope["status"] == "success", envelope
    job = envelope["data"]["job"]
    print(f"job {job['id']}: {job['title']}, {job['status']}, {job['error']}")
    # A tool's own error is its envelope, handed to the model as an error
    # ToolMessage (the adapters' handle_tool_errors), not an exception.
    status, missing = await invoke(tools["get_job_status"], {"job_id": "job-404"})
    assert status == "error" and missing["error"]["code"] == "job_not_found", missing
    print(f"missing job: {missing['error']['code']}")
    await protocol(client)


async def stdio(command, *args):
    # The caller's environment (its XDG_DATA_HOME: the server's trace key).
    connection = {"transport": "stdio", "command": command, "args": list(args), "env": dict(os.environ)}
    client = MultiServerMCPClient({"harmonia": connection})
    await tools_and_calls(
        client,
        [
            "fetch_trend_signals",
            "get_engagement_insights",
            "get_job_status",
            "get_operator_feed",
            "search_trend_signals",
            "suggest_posting_windows",
        ],
    )


def http_client(url, token):
    connection = {"transport": "streamable_http", "url": url, "headers": {"Authorization": f"Bearer {token}"}}
    return MultiServerMCPClient({"harmonia": connection})


async def http(url, token):
    await tools_and_calls(http_client(url, token), ["get_job_status", "get_operator_feed"])


async def skill(url, token):
    client = http_client(url, token)
    async with client.session("harmonia") as session:
        tools = by_name(await load_mcp_tools(session, server_name="harmonia"))
        assert sorted(tools) == ["get_job_status"], sorted(tools)
        status, first = await invoke(tools["get_job_status"], JOB)
        assert status == "success" and first["status"] == "success", first
        print(f"first call: {first['status']} {first['data']['job']['error']}")
        # The guard: one tool per session, and no second success-path call.
        status, again = await invoke(tools["get_job_status"], JOB)
        assert status == "error" and again["error"]["code"] == "call_refused", again
        print(f"second call: {again['error']['code']}")
        trace = await session.read_resource("harmonia://session/trace")
        document = json.loads(trace.contents[0].text)
        assert document["seal"]["algorithm"] == "ed25519", document.get("seal")
        reasons = [entry.get("reason") for entry in document["entries"]]
        print(f"trace reasons: {reasons}")
    # `get_tools()` opens an MCP session for every call: each is a guarded
    # session of its own, so its first call runs.
    loaded = by_name(await client.get_tools())
    for _ in range(2):
        status, alone = await invoke(loaded["get_job_status"], JOB)
        assert status == "success", alone
    await protocol(client)


if __name__ == "__main__":
    scenario, *arguments = sys.argv[1:]
    asyncio.run({"stdio": stdio, "http": http, "skill": skill}[scenario](*arguments))
    print(f"scenario {scenario} passed")
