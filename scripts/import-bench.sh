#!/usr/bin/env bash
# Import time and peak memory of `harmonia workspace import`, for
# workspace documents of 10k, 100k and 1M posts (and a tenth as many jobs,
# each with drafts, a transcript and a token) generated here.
#
#   scripts/import-bench.sh [HARMONIA_BINARY] [POSTS...]
#
# HARMONIA_BINARY defaults to target/release/harmonia (build it with
# `cargo build --release -p harmonia-cli`); POSTS defaults to
# "10000 100000 1000000". Each import runs under GNU time (`/usr/bin/time
# -v`; `apt-get install -y time` if missing) into a fresh database, stopped
# after $IMPORT_TIMEOUT seconds (default 900). Prints one line per size:
# posts, jobs, file MiB, wall seconds, peak resident MiB.
set -euo pipefail

binary=${1:-target/release/harmonia}
shift || true
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(10000 100000 1000000)
limit=${IMPORT_TIMEOUT:-900}

[ -x /usr/bin/time ] || { echo "needs GNU time: apt-get install -y time" >&2; exit 1; }
[ -x "$binary" ] || { echo "no binary at $binary: cargo build --release -p harmonia-cli" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

generate() { # $1 posts, $2 file
    python3 - "$1" "$2" <<'PY'
import json, sys
posts, path = int(sys.argv[1]), sys.argv[2]
jobs = max(1, posts // 10)
with open(path, "w") as out:
    out.write('{"workspaceId": "ws_bench", "updatedAt": "2026-11-30T09:00:00Z", "posts": [')
    for i in range(posts):
        post = {"postId": f"post-{i:07d}", "text": f"Post number {i} about sandboxed agent tools and retries",
                "likes": (i * 7919) % 5000 if i % 10 else None,
                "publishedAt": f"2026-{1 + i % 12:02d}-{1 + i % 28:02d}T{i % 24:02d}:{i % 60:02d}:00Z"}
        out.write(("," if i else "") + json.dumps(post))
    out.write('], "takeaways": {"topPostId": "post-0000001"}, "feed": {"jobHealth": {"active": 1, "failed": 0}}, "jobs": [')
    for i in range(jobs):
        job = {"id": f"job-{i:07d}", "title": f"Job {i}", "status": "waiting_approval",
               "drafts": [{"text": "DRAFT TEXT " * 4}], "transcript": "TRANSCRIPT", "accessToken": "tok_bench",
               "actions": [{"id": "a1", "type": "publish_post", "state": "pending"}]}
        out.write(("," if i else "") + json.dumps(job))
    out.write("]}")
PY
}

printf '%10s %9s %9s %10s %14s\n' posts jobs file_MiB seconds peak_RSS_MiB
for posts in "${sizes[@]}"; do
    file="$work/workspace-$posts.json"
    generate "$posts" "$file"
    rm -f "$work/bench.db" "$work/bench.db-wal" "$work/bench.db-shm"
    set +e
    /usr/bin/time -v -o "$work/time.txt" timeout "$limit" \
        "$binary" workspace import "$file" --db "$work/bench.db" >/dev/null 2>"$work/stderr.txt"
    status=$?
    set -e
    seconds=$(awk -F': ' '/Elapsed \(wall clock\)/ {
        n = split($2, part, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + part[i]; printf "%.2f", s }' "$work/time.txt")
    rss=$(awk -F': ' '/Maximum resident set size/ { printf "%.1f", $2 / 1024 }' "$work/time.txt")
    mib=$(awk -v bytes="$(stat -c %s "$file")" 'BEGIN { printf "%.1f", bytes / 1048576 }')
    if [ "$status" -eq 124 ]; then
        seconds="not done after ${limit}"
    elif [ "$status" -ne 0 ]; then
        seconds="failed ($status): $(head -c 200 "$work/stderr.txt")"
    fi
    printf '%10s %9s %9s %10s %14s\n' "$posts" "$((posts >= 10 ? posts / 10 : 1))" "$mib" "$seconds" "$rss"
    rm -f "$file"
done
