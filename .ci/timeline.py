#!/usr/bin/env python3
"""Echo cargo's output and time its phases, for .ci/run's step table.

Usage: cargo test ... 2>&1 | timeline.py STEPS_FILE PREFIX

Appends to STEPS_FILE one tab-separated row per phase: the build (up to
the first test binary), then each test binary and each crate's doc-tests
(from its `Running`/`Doc-tests` line to the next one). Binaries that ran
in under half a second are summed into one row, so the table stays short.
"""
import re
import sys
import time

steps, prefix = sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else ""
phase = re.compile(r"^\s+(Running|Doc-tests)\s+(.*)$")
binary = re.compile(r"\s*\([^)]*/deps/([^)]*?)-[0-9a-f]+\)")

start = time.monotonic()
current, since, rows = "build", start, []
for line in sys.stdin:
    sys.stdout.write(line)
    sys.stdout.flush()
    found = phase.match(line)
    if found:
        now = time.monotonic()
        rows.append((current, now - since))
        what = binary.sub(r" (\1)", found.group(2)).strip()
        current = ("doc-tests " if found.group(1) == "Doc-tests" else "") + what
        since = now
rows.append((current, time.monotonic() - since))

small = [seconds for _, seconds in rows if seconds < 0.5]
with open(steps, "a") as out:
    for name, seconds in rows:
        if seconds >= 0.5:
            out.write(f"{prefix}{name}\t{seconds:.1f}\n")
    if small:
        out.write(f"{prefix}{len(small)} binaries under 0.5 s each\t{sum(small):.1f}\n")
