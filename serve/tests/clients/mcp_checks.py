"""Checks `harmonia serve` with the official MCP Python SDK as the client.

Usage: python mcp_checks.py SCENARIO SETTINGS_JSON

Each scenario connects the way an agent host would (streamable HTTP or
stdio), asserts what the server must do, and prints one line per check.
Any failed check raises, so the process exits non-zero. The Rust tests in
cli/tests/serve_*.rs start the server and run these scenarios.
"""

import asyncio
import json
import sys
import time

import httpx2
import mcp_types as types
from mcp import Client, MCPError
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

SIX_TOOLS = {
    "fetch_trend_signals": {"limit": 2},
    "search_trend_signals": {"query": "sqlite"},
    "get_engagement_insights": {},
    "get_operator_feed": {},
    "get_job_status": {"job_id": "job-7"},
    "suggest_posting_windows": {},
}
PUBLIC = {"fetch_trend_signals", "search_trend_signals"}
HANDLE = "dev.harmonia/session"
JSON_RPC_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "checks", "version": "1"}},
}


def check(condition, what):
    if not condition:
        raise AssertionError(what)
    print("ok", what)


def http_client(url, token, mode="auto", extra_headers=None):
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    headers.update(extra_headers or {})
    transport = streamable_http_client(url, http_client=httpx2.AsyncClient(headers=headers, timeout=60))
    return Client(transport, mode=mode, read_timeout_seconds=60)


def envelope_of(result):
    """The envelope, checked to be the same as structuredContent and as
    the first text (a stateless skill route adds one more: the handle)."""
    structured = result.structured_content
    check(isinstance(structured, dict), "structuredContent is the envelope object")
    check(set(structured) == {"status", "data", "error", "evidence"}, "the envelope has exactly its four keys")
    texts = [block.text for block in result.content if block.type == "text"]
    check(texts and json.loads(texts[0]) == structured, "the first text content is the same envelope as JSON")
    handle = (result.model_dump(by_alias=True).get("_meta") or {}).get(HANDLE)
    rest = [f"harmonia_session: {handle}"] if handle else []
    check([text.split("\n")[0] for text in texts[1:]] == rest, "after it, only the session's handle, when there is one")
    check(bool(result.is_error) == (structured["status"] == "error"), "isError is true exactly when status is error")
    return structured


async def check_tool_listing(client, expected):
    tools = (await client.list_tools()).tools
    check(sorted(tool.name for tool in tools) == sorted(expected), f"tools/list shows exactly {sorted(expected)}")
    for tool in tools:
        check(tool.output_schema is not None and tool.output_schema["required"] == ["status", "data", "error", "evidence"],
              f"{tool.name}: outputSchema is the envelope's schema")
        check(tool.input_schema.get("type") == "object", f"{tool.name}: inputSchema is the descriptor's object schema")
        notes = tool.annotations
        check(notes.read_only_hint is True and notes.destructive_hint is False and notes.idempotent_hint is True,
              f"{tool.name}: read-only, not destructive, idempotent")
        check(notes.open_world_hint is (tool.name in PUBLIC), f"{tool.name}: openWorldHint only for public tools")


async def call_all_six(client):
    for tool, arguments in SIX_TOOLS.items():
        envelope = envelope_of(await client.call_tool(tool, arguments))
        check(envelope["status"] == "success", f"{tool}: success ({envelope.get('error')})")
        check(all(item["provenance"] == "mock" for item in envelope["evidence"]), f"{tool}: mock evidence")
    bad = envelope_of(await client.call_tool("search_trend_signals", {"query": "   "}))
    check(bad["status"] == "error" and bad["error"]["code"] == "invalid_query", "a tool's own error stays its envelope")


async def refused(client, tool, arguments):
    """A tool the credential is not offered: unknown to it, a protocol
    error (-32602), the same whether or not the tool exists."""
    try:
        await client.call_tool(tool, arguments)
    except MCPError as error:
        check(error.error.code == -32602 and error.error.message == f"Unknown tool: {tool}", f"{tool}: unknown tool")
        return
    check(False, f"{tool}: refused as an unknown tool")


async def refused_by_guard(client, tool, arguments):
    envelope = envelope_of(await client.call_tool(tool, arguments))
    check(envelope["status"] == "error" and envelope["error"]["code"] == "call_refused", f"{tool}: call_refused")
    return envelope


async def scenario_http_tools(settings):
    for mode in ("auto", "legacy"):
        async with http_client(settings["url"] + "/mcp", settings["token"], mode) as client:
            print("mode", mode, "protocol", client.protocol_version)
            await check_tool_listing(client, SIX_TOOLS)
            await call_all_six(client)
            prompts = (await client.list_prompts()).prompts
            check(len(prompts) == 5, "every skill is a prompt")
            prompt = await client.get_prompt("job-status")
            check("job" in prompt.messages[0].content.text.lower(), "a prompt carries the skill's workflow text")


async def scenario_allow_list(settings):
    async with http_client(settings["url"] + "/mcp", settings["limited_token"]) as client:
        await check_tool_listing(client, ["get_job_status"])
        await refused(client, "get_operator_feed", {})
        await refused(client, "no_such_tool", {})
        envelope = envelope_of(await client.call_tool("get_job_status", {"job_id": "job-7"}))
        check(envelope["status"] == "success", "the allowed tool runs")
        check([p.name for p in (await client.list_prompts()).prompts] == ["job-status"],
              "only skills with an allowed tool are prompts")


async def scenario_sqlite(settings):
    async with http_client(settings["url"] + "/mcp", settings["token"]) as client:
        for tool in ("get_engagement_insights", "get_operator_feed", "get_job_status", "suggest_posting_windows"):
            envelope = envelope_of(await client.call_tool(tool, SIX_TOOLS[tool]))
            check(envelope["status"] == "success", f"{tool} on the SQLite store: success ({envelope.get('error')})")
            check(all(item["provenance"] == "live" for item in envelope["evidence"]), f"{tool}: live evidence")
        missing = envelope_of(await client.call_tool("get_job_status", {"job_id": "job-404"}))
        check(missing["error"]["code"] == "job_not_found", "an unknown job is job_not_found")


async def scenario_other_workspace(settings):
    async with http_client(settings["url"] + "/mcp", settings["other_token"],
                           extra_headers={"x-workspace-id": "ws_demo"}) as client:
        feed = envelope_of(await client.call_tool("get_operator_feed", {}))
        check(feed["status"] == "error" and feed["error"]["code"] == "authorization_failed",
              "a token for another workspace never reads ws_demo, whatever header it sends")
        job = envelope_of(await client.call_tool("get_job_status", {"job_id": "job-7", "workspace": "ws_demo"}))
        check(job["status"] == "error", "a workspace argument cannot choose the workspace")


async def expect_401(url, token, what, body=None):
    headers = dict(JSON_RPC_HEADERS)
    if token is not None:
        headers["Authorization"] = f"Bearer {token}" if not token.startswith("RAW ") else token[4:]
    async with httpx2.AsyncClient(timeout=30) as raw:
        response = await raw.post(url, headers=headers, json=body or INIT)
    check(response.status_code == 401, f"{what}: 401 (got {response.status_code})")
    challenge = response.headers.get("www-authenticate", "")
    check(challenge.startswith("Bearer realm=\"harmonia\""), f"{what}: WWW-Authenticate Bearer ({challenge})")
    return challenge


async def scenario_bad_credentials(settings):
    url = settings["url"] + "/mcp"
    challenge = await expect_401(url, None, "no credential")
    check("error=" not in challenge, "no credential: no error code in the challenge")
    check("invalid_token" in await expect_401(url, "hmt_" + "0" * 64, "an unknown token"), "unknown token: invalid_token")
    await expect_401(url, "RAW Basic dXNlcjpwYXNz", "a Basic credential")
    await expect_401(settings["url"] + "/mcp/skills/job-status", None, "a skill path without a credential")
    await expect_401(settings["url"] + "/v1/validate", None, "validate without a credential")
    try:
        async with http_client(url, "hmt_wrong") as client:
            await client.list_tools()
        raise AssertionError("the SDK client connected with a bad token")
    except AssertionError:
        raise
    except Exception as error:  # noqa: BLE001 - the SDK's own error type for an HTTP 401
        print("ok the SDK client is refused:", type(error).__name__)
    async with httpx2.AsyncClient(timeout=10) as raw:
        check((await raw.get(settings["url"] + "/healthz")).status_code == 200, "/healthz needs no credential")
        check((await raw.get(settings["url"] + "/readyz")).status_code == 200, "/readyz answers ready")


async def scenario_revoked(settings):
    await expect_401(settings["url"] + "/mcp", settings["token"], "a revoked token")


async def scenario_works(settings):
    async with http_client(settings["url"] + "/mcp", settings["token"]) as client:
        envelope = envelope_of(await client.call_tool("get_job_status", {"job_id": "job-7"}))
        check(envelope["status"] == "success", "the token works")


async def scenario_telemetry(settings):
    canary = settings["canary"]
    async with http_client(settings["url"] + "/mcp", settings["token"]) as client:
        envelope = envelope_of(await client.call_tool("get_job_status", {"job_id": "job-7"}))
        check(envelope["status"] == "success", "a call that succeeds")
        envelope = envelope_of(await client.call_tool("search_trend_signals", {"query": canary}))
        check(envelope["status"] == "success", "a call whose URL holds an argument")
        envelope = envelope_of(await client.call_tool("get_job_status", {"job_id": "job-7", canary: 1}))
        check(envelope["error"]["code"] == "invalid_input", "a call that fails")


async def scenario_jwt(settings):
    url = settings["url"] + "/mcp"
    async with http_client(url, settings["jwt_good"]) as client:
        await check_tool_listing(client, ["get_job_status", "get_operator_feed"])
        feed = envelope_of(await client.call_tool("get_operator_feed", {}))
        check(feed["status"] == "success", "a valid JWT reads the workspace of its claim")
        await refused(client, "get_engagement_insights", {})
    for name in ("jwt_expired", "jwt_not_yet", "jwt_wrong_audience", "jwt_wrong_issuer", "jwt_wrong_key",
                 "jwt_no_workspace", "jwt_alg_none", "jwt_hs256"):
        challenge = await expect_401(url, settings[name], name)
        check("invalid_token" in challenge, f"{name}: invalid_token")


class Guarded:
    """Calls on a skill route, carrying the guarded session's handle from
    each result to the next request on the stateless revision (where there
    is no MCP session), as an agent host does."""

    def __init__(self, client):
        self.client = client
        self.handle = None

    def meta(self):
        return {HANDLE: self.handle} if self.handle else None

    async def call(self, tool, arguments):
        result = await self.client.call_tool(tool, arguments, meta=self.meta())
        carried = (result.model_dump(by_alias=True).get("_meta") or {}).get(HANDLE)
        stateless = self.client.protocol_version >= "2026-07-28"
        check(bool(carried) == stateless, f"a handle comes back exactly on the stateless revision ({carried!r})")
        self.handle = carried or self.handle
        return envelope_of(result)

    async def refused(self, tool, arguments):
        envelope = await self.call(tool, arguments)
        check(envelope["status"] == "error" and envelope["error"]["code"] == "call_refused", f"{tool}: call_refused")
        return envelope


async def scenario_skill(settings):
    url = settings["url"] + "/mcp/skills/job-status"
    async with http_client(url, settings["token"]) as client:
        print("skill-bound protocol", client.protocol_version)
        check(client.protocol_version >= "2026-07-28", "the SDK speaks the stateless revision on a skill route too")
        await check_tool_listing(client, ["get_job_status"])
        check([p.name for p in (await client.list_prompts()).prompts] == ["job-status"], "the bound skill is the prompt")
        guarded = Guarded(client)
        first = await guarded.call("get_job_status", {"job_id": "job-7"})
        check(first["status"] == "success", "the skill's tool runs")
        again = await guarded.refused("get_job_status", {"job_id": "job-7"})
        check("retry" in again["error"]["message"], "a retry after success is refused by the guard")
        other = await guarded.refused("get_operator_feed", {})
        check("does not allow" in other["error"]["message"], "a tool outside the skill is refused by the guard")
        resources = (await client.list_resources()).resources
        check([str(r.uri) for r in resources] == ["harmonia://session/trace", "skill://job-status/SKILL.md"],
              "the trace and the skill's file are resources")
        contents = (await client.read_resource("harmonia://session/trace", meta=guarded.meta())).contents
        trace = json.loads(contents[0].text)
        kinds = [entry["kind"] for entry in trace["entries"]]
        check(kinds == ["skill_activation", "tool_call", "tool_refused", "tool_refused"], f"the trace records it all {kinds}")
        check(trace["seal"]["algorithm"] == "ed25519", "the trace is signed")
    evidence = first["evidence"][0]["evidenceId"]
    stage = first["data"]["job"]["stage"]
    status = first["data"]["job"]["status"]
    claim = f"job-7 is in stage {stage} with status {status}"
    answer = {"status": "success", "answer": f"{claim} ({evidence}).", "skillName": "job-status",
              "claims": [{"text": claim, "kind": "record", "evidenceIds": [evidence]}], "error": None, "uncertainty": []}
    async with httpx2.AsyncClient(timeout=30, headers={"Authorization": f"Bearer {settings['token']}"}) as raw:
        verdict = (await raw.post(settings["url"] + "/v1/validate", json={"trace": trace, "answer": answer})).json()
        print("verdict", verdict)
        check(verdict["accepted"] is False and verdict["rule"] == "tool_not_allowed", f"validate over HTTP: {verdict}")
        forged = dict(answer, claims=[dict(answer["claims"][0], evidenceIds=["ev-0000000000000000"])])
        tampered = json.loads(json.dumps(trace))
        tampered["entries"] = tampered["entries"][:2]
        verdict = (await raw.post(settings["url"] + "/v1/validate", json={"trace": tampered, "answer": answer})).json()
        check(verdict["rule"] == "trace_unverified" and verdict["mode"] == "submission",
              f"an edited trace is unverified in submission mode, the default: {verdict}")
        verdict = (await raw.post(settings["url"] + "/v1/validate",
                                  json={"trace": tampered, "answer": forged, "mode": "review"})).json()
        check(verdict["rule"] == "unknown_evidence", f"review mode checks the rules: {verdict}")
        check(verdict["seal"] == {"verified": False, "state": "altered", "reason": verdict["seal"]["reason"]},
              f"and says the seal failed: {verdict}")
        bad = await raw.post(settings["url"] + "/v1/validate", content=b'{"trace": [], "trace": []}')
        check(bad.status_code == 400, "a duplicate key in a validate request is a 400")


async def scenario_stdio(settings):
    base = ["serve", "--stdio", "--mock", "--workspace", "ws_demo"]
    params = StdioServerParameters(command=settings["binary"], args=base, env=settings.get("env"))
    async with Client(params, read_timeout_seconds=60) as client:
        await check_tool_listing(client, SIX_TOOLS)
        await call_all_six(client)
    params = StdioServerParameters(command=settings["binary"], args=base + ["--skill", "job-status"], env=settings.get("env"))
    async with Client(params, read_timeout_seconds=60) as client:
        await check_tool_listing(client, ["get_job_status"])
        check(envelope_of(await client.call_tool("get_job_status", {"job_id": "job-7"}))["status"] == "success",
              "stdio skill-bound call")
        await refused_by_guard(client, "get_job_status", {"job_id": "job-7"})
        trace = json.loads((await client.read_resource("harmonia://session/trace")).contents[0].text)
        check(len(trace["entries"]) == 3, "stdio trace resource")
    params = StdioServerParameters(command=settings["binary"], args=base + ["--tools", "get_job_status"], env=settings.get("env"))
    async with Client(params, read_timeout_seconds=60) as client:
        await check_tool_listing(client, ["get_job_status"])
        await refused(client, "get_operator_feed", {})


async def raw_post(raw, url, body, headers=None, token=None):
    all_headers = dict(JSON_RPC_HEADERS)
    all_headers["Authorization"] = f"Bearer {token}"
    all_headers.update(headers or {})
    content = body if isinstance(body, bytes) else json.dumps(body).encode()
    return await raw.post(url, headers=all_headers, content=content)


def rpc_error(response):
    """The JSON-RPC error of a JSON or one-event SSE response body."""
    text = response.text
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        data = [line[5:].strip() for line in text.splitlines() if line.startswith("data:") and line[5:].strip()]
        text = data[-1]
    return json.loads(text).get("error")


async def scenario_bad_input(settings):
    url, token = settings["url"] + "/mcp", settings["token"]
    async with httpx2.AsyncClient(timeout=30) as raw:
        response = await raw_post(raw, url, b"{not json", token=token)
        check(response.status_code == 400 and response.json()["error"]["code"] == -32700,
              f"malformed JSON is a JSON-RPC parse error: {response.status_code} {response.text}")
        response = await raw_post(raw, url, {"jsonrpc": "2.0", "id": 1}, token=token)
        check(response.status_code == 400 and response.json()["error"]["code"] == -32600,
              f"not a JSON-RPC request is an invalid request: {response.status_code} {response.text}")
        response = await raw_post(raw, url, {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                                  headers={"mcp-session-id": "no-such-session"}, token=token)
        check(response.status_code in (400, 404), f"an unknown session id: {response.status_code}")
        response = await raw_post(raw, url, b"[" + b"1," * (2 * 1024 * 1024) + b"1]", token=token)
        check(response.status_code == 413, f"an oversized body: {response.status_code}")
        old = dict(INIT, params=dict(INIT["params"], protocolVersion="1999-01-01"))
        response = await raw_post(raw, url, old, token=token)
        negotiated = None
        if response.status_code == 200:
            body = rpc_error(response)
            if body is None:
                text = response.text
                if response.headers.get("content-type", "").startswith("text/event-stream"):
                    text = [line[5:] for line in text.splitlines() if line.startswith("data:") and line[5:].strip()][-1]
                negotiated = json.loads(text)["result"]["protocolVersion"]
        check(response.status_code >= 400 or negotiated in ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"),
              f"an unknown protocol version is refused or countered with a supported one ({response.status_code}, {negotiated})")
        response = await raw_post(raw, url, INIT, token=token)
        check(response.status_code == 200, "initialize")
        session = response.headers.get("mcp-session-id")
        check(session, "a session id is issued")
        await raw_post(raw, url, {"jsonrpc": "2.0", "method": "notifications/initialized"},
                       headers={"mcp-session-id": session, "mcp-protocol-version": "2025-06-18"}, token=token)
        response = await raw_post(raw, url, {"jsonrpc": "2.0", "id": 2, "method": "no/such/method"},
                                  headers={"mcp-session-id": session, "mcp-protocol-version": "2025-06-18"}, token=token)
        error = rpc_error(response)
        check(error is not None and error["code"] == -32601, f"an unknown method is method-not-found ({error})")
        response = await raw_post(raw, url, {"jsonrpc": "2.0", "id": 3, "method": "tools/list"},
                                  headers={"mcp-session-id": session, "mcp-protocol-version": "1999-01-01"}, token=token)
        check(response.status_code == 400, f"a wrong MCP-Protocol-Version header is a 400 ({response.status_code})")
        response = await raw_post(raw, url, {"jsonrpc": "2.0", "id": 4, "method": "tools/list"},
                                  headers={"mcp-session-id": session, "mcp-protocol-version": "2025-06-18"},
                                  token=settings["other_token"])
        error = rpc_error(response) if response.status_code == 200 else {"status": response.status_code}
        check(error is not None, f"another credential cannot use this session ({error})")
    async with http_client(url, token) as client:
        check(len((await client.list_tools()).tools) == 6, "the server still serves after bad input")


async def scenario_busy(settings):
    url, token = settings["url"] + "/mcp", settings["token"]
    async with http_client(url, token) as first, http_client(url, token) as second:
        async def behind_the_loop():
            await asyncio.sleep(0.3)
            started = time.monotonic()
            answer = await second.call_tool("get_job_status", {"job_id": "job-7"})
            return answer, time.monotonic() - started
        looped, (waited, wait) = await asyncio.gather(first.call_tool("hostile_loop", {}), behind_the_loop())
        code = envelope_of(looped)["error"]["code"]
        check(code == "tool_timeout", f"the loop holds the only permit until its deadline: {code}")
        check(envelope_of(waited)["status"] == "success",
              "the call past the bound waited for the permit and ran when it freed")
        # The loop's deadline is 1 s and it started 0.3 s earlier: the call
        # behind it ran only once the loop's slot freed.
        check(wait >= 0.5, f"the call past the bound waited for the loop's slot: {wait:.3f} s")
        oom = envelope_of(await first.call_tool("hostile_oom", {}))
        check(oom["error"]["code"] == "tool_execution_failed", f"a memory-hungry plugin costs one envelope: {oom['error']}")
        job = envelope_of(await second.call_tool("get_job_status", {"job_id": "job-7"}))
        check(job["status"] == "success", "the server keeps serving")


async def scenario_sessions_bound(settings):
    url, token = settings["url"] + "/mcp", settings["token"]
    async with httpx2.AsyncClient(timeout=30) as raw:
        for n in range(settings["max_sessions"]):
            response = await raw_post(raw, url, INIT, token=token)
            check(response.status_code == 200, f"session {n + 1} opens")
        response = await raw_post(raw, url, INIT, token=token)
        check(response.status_code == 503, f"a session past the bound is refused: {response.status_code}")
        check(response.headers.get("retry-after") == "2", "with Retry-After")
        stateless = {"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {
            "name": "get_job_status", "arguments": {"job_id": "job-7"},
            "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                      "io.modelcontextprotocol/clientInfo": {"name": "checks", "version": "1"},
                      "io.modelcontextprotocol/clientCapabilities": {}}}}
        response = await raw_post(raw, url, stateless, token=token, headers={
            "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "get_job_status"})
        result = json.loads(response.text).get("result", {})
        check(response.status_code == 200 and result.get("structuredContent", {}).get("status") == "success",
              f"a stateless call opens no session and is served while sessions are full: {response.status_code}")
        check((await raw.get(settings["url"] + "/readyz")).status_code == 200, "the server stays ready")


async def scenario_drain_call(settings):
    async with http_client(settings["url"] + "/mcp", settings["token"]) as client:
        print("calling", flush=True)
        envelope = envelope_of(await client.call_tool("hostile_loop", {}))
        check(envelope["error"]["code"] == "tool_timeout", "the call in flight finishes with its envelope during the drain")


class SessionClient:
    """An SDK client in a legacy (session) connection that notes its session id."""

    def __init__(self, url, token):
        self.session_id = None

        async def note(response):
            self.session_id = response.headers.get("mcp-session-id") or self.session_id

        raw = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60,
                                 event_hooks={"response": [note]})
        self.client = Client(streamable_http_client(url, http_client=raw), mode="legacy", read_timeout_seconds=60)

    async def __aenter__(self):
        await self.client.__aenter__()
        return self

    async def __aexit__(self, *exc):
        return await self.client.__aexit__(*exc)

    @property
    def replica(self):
        return self.session_id.split(".", 1)[0]


async def session_on_replicas(url, token, count):
    """`count` sessions opened through the balancer, each calling twice."""
    replicas = []
    for _ in range(count):
        async with SessionClient(url, token) as session:
            for _ in range(2):
                job = envelope_of(await session.client.call_tool("get_job_status", {"job_id": "job-7"}))
                check(job["status"] == "success", f"a call in session {session.session_id} reaches its replica")
            replicas.append(session.replica)
    return replicas


async def scenario_replicas(settings):
    url, token = settings["url"] + "/mcp", settings["token"]
    replicas = await session_on_replicas(url, token, 6)
    check(set(replicas) == {"a", "b"}, f"new sessions are spread over both replicas: {replicas}")
    pinned = None
    for _ in range(10):
        candidate = await SessionClient(url, token).__aenter__()
        if candidate.replica == "a":
            pinned = candidate
            break
        await candidate.__aexit__(None, None, None)
    check(pinned is not None, "a session opens on replica a")
    print("calling", flush=True)
    in_flight = asyncio.ensure_future(pinned.client.call_tool("hostile_loop", {}))
    await asyncio.sleep(0.6)  # replica a is draining by now
    during = await session_on_replicas(url, token, 3)
    check(during == ["b"] * 3, f"while a drains, new sessions land on b: {during}")
    envelope = envelope_of(await in_flight)
    check(envelope["error"]["code"] == "tool_timeout", "the call in flight on a finishes with its envelope")
    try:
        await pinned.__aexit__(None, None, None)
    except Exception as error:  # a draining replica may refuse the session's DELETE
        print("closing the drained session:", type(error).__name__)
    print("drained", flush=True)
    sys.stdin.readline()  # the test says when replica a has exited
    after = await session_on_replicas(url, token, 3)
    check(after == ["b"] * 3, f"with a gone, every new session is on b: {after}")


async def scenario_session_takeover(settings):
    """The SDK's session runs a slow call; another credential, knowing the
    session id, tries to take the call's stream over, listen, cancel and
    delete: each is refused, and the owner gets its own result."""
    url = settings["url"] + "/mcp"
    seen = {}

    async def remember(response):
        if response.headers.get("mcp-session-id"):
            seen["id"] = response.headers["mcp-session-id"]

    owner = httpx2.AsyncClient(headers={"Authorization": f"Bearer {settings['token']}"}, timeout=60,
                               event_hooks={"response": [remember]})
    async with Client(streamable_http_client(url, http_client=owner), mode="legacy", read_timeout_seconds=60) as client:
        call = asyncio.create_task(client.call_tool("hostile_loop", {}))
        await asyncio.sleep(0.3)
        check("id" in seen, "the SDK's session has an id")
        other = {"Authorization": f"Bearer {settings['other_token']}", "mcp-session-id": seen["id"],
                 "mcp-protocol-version": "2025-06-18"}
        async with httpx2.AsyncClient(timeout=10) as raw:
            for last in ("0", "1/0", "2/0", "0/1"):
                stolen = await raw.get(url, headers={**other, "Accept": "text/event-stream", "Last-Event-ID": last})
                check(stolen.status_code == 404, f"another credential cannot resume the stream from {last}")
            listen = await raw.get(url, headers={**other, "Accept": "text/event-stream"})
            check(listen.status_code == 404, "another credential cannot listen on the session")
            cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}
            posted = await raw.post(url, headers={**other, **JSON_RPC_HEADERS}, json=cancel)
            check(posted.status_code == 404, "another credential cannot cancel the owner's call")
            deleted = await raw.delete(url, headers=other)
            check(deleted.status_code == 404, "another credential cannot delete the session")
        envelope = envelope_of(await call)
        check(envelope["status"] == "error" and envelope["error"]["code"] == "tool_timeout",
              f"the owner's call got its own result: {envelope['error']}")
        tools = (await client.list_tools()).tools
        check(len(tools) == 3, "and the session is still the owner's")


SCENARIOS = {name[len("scenario_"):]: value for name, value in globals().items() if name.startswith("scenario_")}


def main():
    scenario, settings = sys.argv[1], json.loads(sys.argv[2])
    asyncio.run(SCENARIOS[scenario](settings))
    print("scenario", scenario, "passed")


if __name__ == "__main__":
    main()
