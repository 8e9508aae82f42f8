#!/usr/bin/env python3
"""A local stand-in for the Harmonia web internal API (standard library only).

Serves one workspace document (default: the demo workspace) as
  GET /api/internal/insights        -> {"posts": [...measured...], "takeaways": {...}}
  GET /api/internal/proactive-feed  -> the feed, with "updatedAt"
  GET /api/internal/job/<id>        -> the stored job document, or 404
It requires `Authorization: Bearer <token>` (token from $HARMONIA_API_TOKEN,
default "dev-token") and an `x-workspace-id` matching the document.

Usage: python3 examples/internal_api.py [--port 9000] [--workspace FILE]
"""

import argparse
import datetime
import json
import os
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_WORKSPACE = os.path.join(HERE, "..", "host", "fixtures", "demo_workspace.json")


def make_handler(document, token):
    measured = [post for post in document.get("posts", []) if post.get("likes") is not None]

    class Handler(BaseHTTPRequestHandler):
        def reply(self, status, body):
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            if self.headers.get("authorization") != f"Bearer {token}":
                return self.reply(401, {"error": "unauthorized"})
            if self.headers.get("x-workspace-id") != document["workspaceId"]:
                return self.reply(403, {"error": "forbidden"})
            path = urllib.parse.urlsplit(self.path).path
            if path == "/api/internal/insights":
                return self.reply(200, {"posts": measured, "takeaways": document.get("takeaways")})
            if path == "/api/internal/proactive-feed":
                now = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)
                feed = dict(document.get("feed", {}), updatedAt=now.isoformat().replace("+00:00", "Z"))
                return self.reply(200, feed)
            prefix = "/api/internal/job/"
            if path.startswith(prefix):
                job_id = urllib.parse.unquote(path[len(prefix):])
                for job in document.get("jobs", []):
                    if job["id"] == job_id:
                        return self.reply(200, job)
                return self.reply(404, {"error": "no such job"})
            return self.reply(404, {"error": "no such route"})

        def log_message(self, format, *args):
            pass

    return Handler


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=9000)
    parser.add_argument("--workspace", default=DEFAULT_WORKSPACE)
    args = parser.parse_args()
    with open(args.workspace) as file:
        document = json.load(file)
    token = os.environ.get("HARMONIA_API_TOKEN", "dev-token")
    server = ThreadingHTTPServer(("127.0.0.1", args.port), make_handler(document, token))
    print(f"internal API for {document['workspaceId']} on http://127.0.0.1:{args.port}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
