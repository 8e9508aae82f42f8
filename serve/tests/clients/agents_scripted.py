"""An OpenAI Agents SDK agent whose model is scripted (no network, no API
key) calling `harmonia serve` through the SDK's own MCP server classes:

  python agents_scripted.py stdio CMD ARG...   MCPServerStdio: the agent
                                               starts `harmonia serve --stdio`
  python agents_scripted.py http URL TOKEN     MCPServerStreamableHttp with a
                                               bearer token on /mcp
  python agents_scripted.py skill URL TOKEN    the same on a skill route: the
                                               agent host carries the guarded
                                               session's handle
                                               (`dev.harmonia/session`) from
                                               each result's `_meta` to the
                                               next call's, with the SDK's
                                               `custom_data_extractor` and
                                               `tool_meta_resolver`
  python agents_scripted.py stock URL TOKEN N  a skill route as the SDK is,
                                               carrying no handle: N calls of
                                               the same tool (a retry after a
                                               success, or after retryable
                                               failures), each judged by the
                                               credential's one guarded
                                               session

The scripted model implements the SDK's `Model` interface: it asks for
`get_job_status` on job-7, reads the tool's output the runner gives back,
and answers with fields of that envelope (on the skill route it first asks
for the same tool a second time, which the guard refuses). Prints the
protocol revision negotiated, the final output and "scenario NAME passed",
or fails with the reason.
"""

import asyncio
import json
import os
import sys

from agents import Agent, RunConfig, Runner
from agents.items import ModelResponse
from agents.mcp import MCPServerStdio, MCPServerStreamableHttp
from agents.models.interface import Model
from agents.tool import FunctionTool
from agents.usage import Usage
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText

HANDLE = "dev.harmonia/session"
JOB = {"job_id": "job-7"}


def tool_outputs(input_items):
    """The envelopes the runner handed back, in order (the MCP result's
    JSON text, as the SDK gives it to a model)."""
    envelopes = []
    for item in input_items if isinstance(input_items, list) else []:
        if not isinstance(item, dict) or item.get("type") != "function_call_output":
            continue
        output = item["output"]
        if isinstance(output, list):
            # The envelope's text first; on a stateless skill route, the
            # session's handle after it.
            output = next(part.get("text", "") for part in output if part.get("type") in ("input_text", "text"))
        envelopes.append(json.loads(output.split("\nharmonia_session: ")[0]))
    return envelopes


class ScriptedModel(Model):
    """A model that follows a script instead of sampling: `calls` tool
    calls of get_job_status, then a final answer built from what the tools
    returned."""

    def __init__(self, calls):
        self.calls = calls
        self.turns = 0

    async def get_response(
        self,
        system_instructions,
        input,
        model_settings,
        tools,
        output_schema,
        handoffs,
        tracing,
        *,
        previous_response_id,
        conversation_id,
        prompt,
    ):
        self.turns += 1
        offered = {tool.name: tool for tool in tools if isinstance(tool, FunctionTool)}
        assert "get_job_status" in offered, f"the model was not offered the tool: {sorted(offered)}"
        assert "job_id" in offered["get_job_status"].params_json_schema["properties"], offered
        seen = tool_outputs(input)
        if len(seen) < self.calls:
            call = ResponseFunctionToolCall(
                id=f"fc_{len(seen)}",
                call_id=f"call_{len(seen)}",
                type="function_call",
                name="get_job_status",
                arguments=json.dumps(JOB),
            )
            return ModelResponse(output=[call], usage=Usage(), response_id=None)
        first = seen[0]
        if first["status"] == "success":
            job = first["data"]["job"]
            words = [f"first call success: job {job['id']} ({job['title']}) is {job['status']}, error {job['error']}"]
        else:
            words = [f"first call error {first['error']['code']}"]
        for later in seen[1:]:
            words.append(f"then {later['status']} {(later.get('error') or {}).get('code')}")
        text = ResponseOutputText(type="output_text", text="; ".join(words), annotations=[])
        message = ResponseOutputMessage(
            id="msg_final", type="message", role="assistant", status="completed", content=[text]
        )
        return ModelResponse(output=[message], usage=Usage(), response_id=None)

    def stream_response(self, *args, **kwargs):
        raise NotImplementedError("the scripted model does not stream")


class Handles:
    """What an agent host does on the stateless revision's skill route:
    keep the handle each result carries and send it with the next call."""

    def __init__(self):
        self.current = None
        self.received = []
        self.sent = []

    def extract(self, context):
        handle = (context.result_meta or {}).get(HANDLE)
        if handle:
            self.current = handle
            self.received.append(handle)
        return None

    def resolve(self, context):
        self.sent.append(self.current)
        return {HANDLE: self.current} if self.current else None


async def run(server, calls):
    model = ScriptedModel(calls)
    agent = Agent(
        name="liaison",
        instructions="Report the job's status from the tool's envelope.",
        model=model,
        mcp_servers=[server],
        mcp_config={"convert_schemas_to_strict": True},
    )
    result = await Runner.run(agent, "What happened to job-7?", run_config=RunConfig(tracing_disabled=True))
    assert model.turns == calls + 1, model.turns
    print(f"protocol {server.session.protocol_version}")
    print(f"final: {result.final_output}")
    return result.final_output


async def stdio(command, *args):
    # The caller's environment (its XDG_DATA_HOME: the server's trace key).
    params = {"command": command, "args": list(args), "env": dict(os.environ)}
    async with MCPServerStdio(params=params, name="harmonia", client_session_timeout_seconds=30) as server:
        final = await run(server, 1)
    assert final.startswith("first call success"), final


async def http(url, token):
    params = {"url": url, "headers": {"Authorization": f"Bearer {token}"}}
    async with MCPServerStreamableHttp(params=params, name="harmonia", client_session_timeout_seconds=30) as server:
        final = await run(server, 1)
    assert final.startswith("first call success"), final


async def skill(url, token):
    handles = Handles()
    params = {"url": url, "headers": {"Authorization": f"Bearer {token}"}}
    async with MCPServerStreamableHttp(
        params=params,
        name="harmonia-skill",
        client_session_timeout_seconds=30,
        tool_meta_resolver=handles.resolve,
        custom_data_extractor=handles.extract,
    ) as server:
        listed = [tool.name for tool in await server.list_tools()]
        assert listed == ["get_job_status"], listed
        final = await run(server, 2)
    # The first call opened the guarded session; the second went on in it
    # (with the handle the first answered) and the guard refused it.
    assert handles.sent[0] is None and handles.sent[1] == handles.received[0], (handles.sent, handles.received)
    assert len(handles.received) == 2 and handles.received[0] != handles.received[1], handles.received
    assert final.startswith("first call success") and "then error call_refused" in final, final


async def stock(url, token, calls):
    params = {"url": url, "headers": {"Authorization": f"Bearer {token}"}}
    async with MCPServerStreamableHttp(params=params, name="harmonia-skill", client_session_timeout_seconds=30) as server:
        await run(server, int(calls))


if __name__ == "__main__":
    scenario, *arguments = sys.argv[1:]
    asyncio.run({"stdio": stdio, "http": http, "skill": skill, "stock": stock}[scenario](*arguments))
    print(f"scenario {scenario} passed")
