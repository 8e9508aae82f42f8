"""The OpenAI Agents SDK's MCP classes against `harmonia serve`: every
input schema the server lists converts to the SDK's strict mode (what
OpenAI's strict function calling accepts), and a tool called through the
SDK's MCP server class answers the envelope.

Usage: python agents_strict.py URL TOKEN
Prints "scenario agents-strict passed", or fails naming the tool.
"""

import asyncio
import copy
import json
import sys

from agents.mcp import MCPServerStreamableHttp, MCPUtil
from agents.mcp.util import tool_input_schema
from agents.strict_schema import ensure_strict_json_schema


async def main(url, token):
    params = {"url": url, "headers": {"Authorization": f"Bearer {token}"}}
    async with MCPServerStreamableHttp(params=params, name="harmonia") as server:
        tools = await server.list_tools()
        assert len(tools) == 6, [tool.name for tool in tools]
        for tool in tools:
            # The SDK's own check first, so a failure says why.
            ensure_strict_json_schema(copy.deepcopy(tool_input_schema(tool)))
            converted = MCPUtil.to_function_tool(tool, server, convert_schemas_to_strict=True)
            assert converted.strict_json_schema, f"{tool.name}: not strict"
            print(f"{tool.name}: strict {json.dumps(converted.params_json_schema, sort_keys=True)}")
        result = await server.call_tool("get_job_status", {"job_id": "job-7"})
        assert result.structured_content["status"] == "success", result
    print("scenario agents-strict passed")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
