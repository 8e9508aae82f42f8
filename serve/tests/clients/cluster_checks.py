"""Three `harmonia serve` replicas behind nginx, one PostgreSQL, each on a
host of its own (network namespaces), driven by the official MCP Python
SDK on the stateless revision (2026-07-28), as an agent host would.

Usage: python cluster_checks.py PHASE SETTINGS_JSON

cli/tests/all/serve_cluster.rs makes the hosts, starts the servers, runs
each phase in the client's namespace and makes the faults between (or
during) them: it reads the lines a phase prints ("calling", "holding r2")
and answers on stdin ("go on"). Each check prints one line; any failed
check raises, so the process exits non-zero. A phase ends with
"phase NAME passed".

SETTINGS: {"balancer": URL, "replicas": {"r1": URL, ...}, "tokens": {...},
"pool": [TOKEN, ...]}: each guarded session of the loops takes the next
token of the pool (a credential holds at most 3 live sessions).
"""

import asyncio
import json
import re
import sys
import time

import httpx2
from mcp import Client, MCPError
from mcp.client.streamable_http import streamable_http_client

HANDLE_TEXT = re.compile(r"^harmonia_session: (\S+)")
JOB = {"job_id": "job-7"}


def check(condition, what):
    if not condition:
        raise AssertionError(what)
    print("ok", what, flush=True)


def say(line):
    print(line, flush=True)


def client(url, token):
    raw = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60)
    return Client(streamable_http_client(url, http_client=raw), mode="auto", read_timeout_seconds=60)


def outcome(result):
    """The envelope's status or error code, and the handle the result
    gives back (as text a model reads, after the envelope)."""
    texts = [block.text for block in result.content if block.type == "text"]
    envelope = json.loads(texts[0])
    check(envelope == result.structured_content, "the first text is the envelope")
    handles = [found.group(1) for found in map(HANDLE_TEXT.match, texts[1:]) if found]
    code = "success" if envelope["status"] == "success" else envelope["error"]["code"]
    return code, (handles[0] if handles else None)


class Transient(Exception):
    """An answer that says: the same request may succeed later."""


async def call(session, tool, arguments, handle=None):
    """One guarded call, its outcome and next handle; a retryable refusal
    (the ledger away, the session busy, a replica gone) is Transient."""
    if handle:
        arguments = dict(arguments, harmonia_session=handle)
    try:
        result = await session.call_tool(tool, arguments)
    except MCPError as error:
        data = error.error.data or {}
        if data.get("retryable"):
            raise Transient(data.get("reason")) from error
        raise
    except (httpx2.HTTPError, OSError) as error:
        raise Transient(type(error).__name__) from error
    return outcome(result)


async def retrying(make, seconds, transient):
    """`make()` until it is not Transient, for at most `seconds`; each
    transient reason is counted in `transient`."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            return await make()
        except Transient as why:
            transient[str(why)] = transient.get(str(why), 0) + 1
            check(time.monotonic() < deadline, f"a transient refusal ({why}) ends within {seconds} s")
            await asyncio.sleep(0.2)
        except Exception as error:  # noqa: BLE001: the SDK wraps transport failures
            if isinstance(error, AssertionError):
                raise
            reason = type(error).__name__
            transient[reason] = transient.get(reason, 0) + 1
            check(time.monotonic() < deadline, f"a transport failure ({reason}) ends within {seconds} s")
            await asyncio.sleep(0.2)


async def read_trace(session, handle=None):
    meta = {"dev.harmonia/session": handle} if handle else None
    contents = (await session.read_resource("harmonia://session/trace", meta=meta)).contents
    return json.loads(contents[0].text)


def entry_kinds(trace):
    return [(entry["kind"], entry.get("tool"), entry.get("reason")) for entry in trace["entries"]]


POOL = []


async def guarded_session(url, transient, seconds=30):
    """One guarded session at `url` (a skill route), with the next token of
    the pool: opened explicitly, its call run, a retry refused by the guard
    (on whichever replica), its trace read. Returns the trace's entries."""
    async with client(url, POOL.pop()) as session:
        first, handle = await retrying(lambda: call(session, "get_job_status", JOB, "new"), seconds, transient)
        check(first == "success", f"a new session's call runs ({first})")
        retry, handle = await retrying(lambda: call(session, "get_job_status", JOB, handle), seconds, transient)
        check(retry == "call_refused", f"a retry after a success is refused on another replica ({retry})")
        trace = await retrying(lambda: read_trace(session, handle), seconds, transient)
    kinds = entry_kinds(trace)
    calls = [kind for kind in kinds if kind[0] == "tool_call"]
    check(len(calls) == 1, f"the trace records the one call exactly once: {kinds}")
    check(kinds[0][0] == "skill_activation" and all(kind[0] == "tool_refused" for kind in kinds[2:]),
          f"and every refused retry after it: {kinds}")
    return kinds


async def metric(url, name):
    """The sum of a series of a replica's /metrics, every label set."""
    async with httpx2.AsyncClient(timeout=10) as raw:
        text = (await raw.get(url + "/metrics")).text
    total = 0.0
    for line in text.splitlines():
        if line.startswith(name + "{") or line.startswith(name + " "):
            total += float(line.rsplit(" ", 1)[1])
    return total


async def readyz(url):
    async with httpx2.AsyncClient(timeout=5) as raw:
        try:
            return (await raw.get(url + "/readyz")).status_code
        except httpx2.HTTPError:
            return 0


async def phase_ready(settings):
    """Every replica ready: its database reached and its schema migrated."""
    deadline = time.monotonic() + 60
    for name, url in settings["replicas"].items():
        while await readyz(url) != 200:
            check(time.monotonic() < deadline, f"{name} is ready within 60 s")
            await asyncio.sleep(0.2)
        check(True, f"{name} is ready")


async def phase_round_robin(settings):
    url = settings["balancer"] + "/mcp/skills/job-status"
    async with client(url, POOL[-1]) as session:
        check(session.protocol_version >= "2026-07-28", f"the SDK speaks the stateless revision ({session.protocol_version})")
        listed = (await session.list_tools()).tools
        check("harmonia_session" in listed[0].input_schema["properties"], "each tool takes the handle as an argument")
    transient = {}
    for _ in range(6):
        await guarded_session(url, transient)
    check(not transient, f"no transient refusal without a fault: {transient}")
    for name, replica in settings["replicas"].items():
        served = await metric(replica, "harmonia_calls_total")
        check(served >= 1, f"{name} ran guarded calls ({served}): the sessions went round robin")


async def phase_share(settings):
    """The credential's share of sessions (3) holds over all replicas."""
    async with client(settings["balancer"] + "/mcp/skills/job-status", settings["tokens"]["limited"]) as session:
        for n in range(3):
            first, _ = await call(session, "get_job_status", JOB, "new")
            check(first == "success", f"session {n + 1} of 3 opens")
        try:
            await call(session, "get_job_status", JOB, "new")
            check(False, "a fourth session is refused")
        except Transient as why:
            check(str(why) == "credential_sessions", f"a fourth, on any replica, is refused: {why}")
    initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "cluster", "version": "1"}}}
    async with httpx2.AsyncClient(timeout=30) as raw:
        for _ in range(3):
            answer = await raw.post(settings["balancer"] + "/mcp", json=initialize, headers={
                "Authorization": f"Bearer {settings['tokens']['limited']}",
                "Accept": "application/json, text/event-stream"})
            check(answer.status_code == 503 and answer.json()["error"] == "this credential holds its share of sessions",
                  f"an MCP session too, on every replica: {answer.status_code}")


async def phase_rate(settings):
    """A credential's rate (2/s, burst 4) holds over all replicas."""
    async with client(settings["balancer"] + "/mcp", settings["tokens"]["rated"]) as session:
        started = time.monotonic()
        counts = {}
        while time.monotonic() - started < 4.0:
            code, _ = outcome(await session.call_tool("get_job_status", JOB))
            counts[code] = counts.get(code, 0) + 1
        elapsed = time.monotonic() - started
    allowed = 4 + 2 * elapsed
    say(f"rate: {counts} in {elapsed:.2f} s, at most {allowed:.1f} allowed")
    check(counts.get("success", 0) <= allowed + 1, f"no more than burst + rate x t ran, cluster-wide: {counts}")
    check(counts.get("success", 0) >= 4, f"the burst ran: {counts}")
    check(counts.get("rate_limited", 0) > 0, f"the rest were told to wait: {counts}")


async def phase_kill(settings):
    """A replica killed (SIGKILL) in the middle of a guarded call: the step
    is not recorded; the session goes on once the hold's lease ends."""
    transient = {}
    async with client(settings["balancer"] + "/mcp/skills/trend-scan", settings["tokens"]["slow"]) as session:
        in_flight = asyncio.ensure_future(call(session, "hostile_loop", {}, "new"))
        holder = None
        for _ in range(100):
            await asyncio.sleep(0.05)
            for name, url in settings["replicas"].items():
                if await metric(url, "harmonia_calls_in_flight") >= 1:
                    holder = name
            if holder:
                break
        check(holder is not None, "a replica runs the call")
        say(f"holding {holder}")
        sys.stdin.readline()  # the replica is dead now
        try:
            await in_flight
            check(False, "the killed replica's call gets no envelope")
        except Exception as error:  # noqa: BLE001: a transport failure, or a retryable refusal
            say(f"the call in flight failed: {type(error).__name__}")
        # The hold lasts the call's deadline and a margin: busy until then.
        again, _ = await retrying(lambda: call(session, "hostile_loop", {}), 30, transient)
        check(again == "tool_timeout", f"the step runs again, on another replica ({again})")
        check(transient.get("session_busy", 0) >= 1, f"busy while the dead replica's hold lasted: {transient}")
        kinds = entry_kinds(await read_trace(session))
        check([kind[0] for kind in kinds] == ["skill_activation", "tool_call"],
              f"the killed call recorded nothing, the next one exactly once: {kinds}")


async def phase_database_restart(settings):
    """Guarded sessions while PostgreSQL restarts: refused as retryable
    while it is away, never served unguarded, every step once."""
    transient = {}
    sessions = 0
    url = settings["balancer"] + "/mcp/skills/job-status"
    say("looping")
    started = time.monotonic()
    while time.monotonic() - started < 10 and POOL:
        await guarded_session(url, transient, seconds=60)
        sessions += 1
    say(f"database restart: {sessions} sessions, transient refusals {transient}")
    check(sessions >= 3, "sessions went on across the restart")


async def phase_cut(settings):
    """Replica r2 cut off from the database: it says it is not ready,
    refuses guarded calls as retryable and serves none unguarded; once the
    link is back it serves again, with no restart."""
    r2 = settings["replicas"]["r2"]
    deadline = time.monotonic() + 20
    while await readyz(r2) != 503:
        check(time.monotonic() < deadline, "r2 says it is not ready within 20 s")
        await asyncio.sleep(0.2)
    check(True, "r2 answers 503 on /readyz")
    before = await metric(r2, "harmonia_calls_total")
    async with client(r2 + "/mcp/skills/job-status", settings["tokens"]["cut"]) as direct:
        try:
            await call(direct, "get_job_status", JOB, "new")
            check(False, "a guarded call on r2 is refused")
        except Transient as why:
            check(str(why) == "ledger_unavailable", f"refused on r2 as retryable: {why}")
    transient = {}
    for _ in range(4):
        await guarded_session(settings["balancer"] + "/mcp/skills/job-status", transient)
    check(await metric(r2, "harmonia_calls_total") == before, "r2 ran no guarded call while cut off")
    say(f"cut: transient refusals {transient}")
    # Unguarded calls go on at r2, through buckets of its own, each a 1/3
    # share of the credential's rate (2/s) and burst (4, so 1).
    async with client(r2 + "/mcp", settings["tokens"]["rated"]) as unguarded:
        started, counts = time.monotonic(), {}
        while time.monotonic() - started < 3.0:
            code, _ = outcome(await unguarded.call_tool("get_job_status", JOB))
            counts[code] = counts.get(code, 0) + 1
        elapsed = time.monotonic() - started
    share = 1 + 2 / 3 * elapsed
    say(f"cut: r2's own buckets let {counts} through in {elapsed:.2f} s (a 1/3 share: at most {share:.1f})")
    check(1 <= counts.get("success", 0) <= share + 1, f"r2 alone serves its 1/3 share of the rate: {counts}")
    say("mend it")
    sys.stdin.readline()
    deadline = time.monotonic() + 30
    while await readyz(r2) != 200:
        check(time.monotonic() < deadline, "r2 is ready again within 30 s of the link's return")
        await asyncio.sleep(0.2)
    async with client(r2 + "/mcp/skills/job-status", settings["tokens"]["cut"]) as direct:
        first, _ = await retrying(lambda: call(direct, "get_job_status", JOB, "new"), 30, {})
        check(first == "success", "r2 serves guarded calls again, not restarted")
    check(await metric(r2, "harmonia_calls_total") > before, "r2 ran it")


PHASES = {
    "ready": phase_ready,
    "round-robin": phase_round_robin,
    "share": phase_share,
    "rate": phase_rate,
    "kill": phase_kill,
    "database-restart": phase_database_restart,
    "cut": phase_cut,
}


def main():
    phase, settings = sys.argv[1], json.loads(sys.argv[2])
    POOL.extend(settings.get("pool", []))
    asyncio.run(PHASES[phase](settings))
    print(f"phase {phase} passed", flush=True)


if __name__ == "__main__":
    main()
