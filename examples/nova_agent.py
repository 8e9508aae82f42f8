#!/usr/bin/env python3
"""A minimal agent in Python (standard library only) driving `harmonia session`.

It plays Nova, the read-only liaison: it activates the job-status skill,
calls get_job_status through the guarded session, writes a grounded answer
citing the exact evidence ids, and asks the host to validate it. It then
shows the guard and the validator at work: a retry after a non-retryable
error is refused, and an answer claiming authority is rejected.

Usage: python3 examples/nova_agent.py [path/to/harmonia] [extra session args...]
"""

import json
import subprocess
import sys


class Session:
    """One `harmonia session` process, spoken to in JSON lines."""

    def __init__(self, command):
        self.process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1
        )

    def send(self, request):
        line = request if isinstance(request, str) else json.dumps(request)
        self.process.stdin.write(line + "\n")
        self.process.stdin.flush()
        return json.loads(self.process.stdout.readline())

    def close(self):
        self.process.stdin.close()
        return self.process.wait(timeout=30)


def grounded_answer(envelope):
    job = envelope["data"]["job"]
    evidence = envelope["evidence"][0]["evidenceId"]
    claim = f"{job['id']} is in stage {job['stage']} with status {job['status']}"
    drafts = f"{job['id']} has {job['draftCount']} drafts"
    return {
        "status": "success",
        "answer": f"{claim} ({evidence}). {drafts}.",
        "skillName": "job-status",
        "claims": [
            {"text": claim, "kind": "record", "evidenceIds": [evidence]},
            {"text": drafts, "kind": "record", "evidenceIds": [evidence]},
        ],
        "error": None,
        "uncertainty": [],
    }


def main():
    binary = sys.argv[1] if len(sys.argv) > 1 else "harmonia"
    extra = sys.argv[2:] or ["--mock", "--workspace", "ws_demo"]
    results = {}

    session = Session([binary, "session", *extra])
    activation = session.send({"op": "activate", "skill": "job-status"})
    results["activated"] = activation.get("ok", False)
    envelope = session.send({"op": "call", "tool": "get_job_status", "args": {"job_id": "job-42"}})
    results["call_status"] = envelope["status"]
    answer = grounded_answer(envelope)
    results["grounded"] = session.send({"op": "validate", "answer": answer})
    overreach = dict(answer, answer=answer["answer"] + " I approved act-1.")
    results["overreach"] = session.send({"op": "validate", "answer": overreach, "mode": "review"})
    results["malformed_line"] = session.send("this is not json")
    trace = session.send({"op": "trace"})["trace"]  # signed: {"entries": [...], "seal": {...}}
    results["trace_kinds"] = [entry["kind"] for entry in trace["entries"]]
    results["trace_signed"] = trace["seal"]["algorithm"] == "ed25519"
    results["session_exit"] = session.close()

    retry = Session([binary, "session", *extra])
    retry.send({"op": "activate", "skill": "job-status"})
    missing = retry.send({"op": "call", "tool": "get_job_status", "args": {"job_id": "job-999"}})
    results["missing_code"] = missing["error"]["code"]
    refused = retry.send({"op": "call", "tool": "get_job_status", "args": {"job_id": "job-999"}})
    results["retry_code"] = refused["error"]["code"]
    retry.close()

    print(json.dumps(results, indent=2))
    expected = (
        results["activated"]
        and results["call_status"] == "success"
        and results["grounded"] == {"accepted": True, "rule": None, "reason": None}
        and results["overreach"]["rule"] == "mutation_claim"
        and results["malformed_line"]["error"]["code"] == "bad_request"
        and results["trace_kinds"] == ["skill_activation", "tool_call"]
        and results["trace_signed"]
        and results["missing_code"] == "job_not_found"
        and results["retry_code"] == "call_refused"
        and results["session_exit"] == 0
    )
    return 0 if expected else 1


if __name__ == "__main__":
    sys.exit(main())
