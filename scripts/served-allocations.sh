#!/usr/bin/env bash
# Allocations per request served by `harmonia serve`, counted in the
# steady state of `harmonia bench --only concurrency`'s first figure
# (1,000 MCP clients, stateless `tools/call`):
#   - uprobes on jemalloc's entry points (malloc, mallocx, rallocx, calloc)
#     and on `TokenStore::verify`, which runs once per request;
#   - `perf stat --per-thread` for 2 s, 3 s after the bench starts (the
#     figure's warm-up is over by then), on the server's threads only
#     (`bench-serve`), not the bench's clients or upstream.
# The probes slow the server about tenfold; what a request allocates does
# not change, so the figure is exact where CPU time is not.
#
# usage: scripts/served-allocations.sh BINARY...   (root: uprobes, perf)
# Needs perf, readelf and nm (binutils); each BINARY is a release
# `harmonia` built with jemalloc (the default on Linux).
set -euo pipefail

tracing=/sys/kernel/tracing
# A fresh machine may not have tracefs mounted yet.
[ -e "$tracing/uprobe_events" ] || mount -t tracefs nodev "$tracing" 2>/dev/null || true
[ -w "$tracing/uprobe_events" ] || { echo "needs root and tracefs at $tracing" >&2; exit 2; }
ulimit -n 20000

# The file offset of symbol $2 (exact name, demangled) in ELF $1.
offset() {
    local elf=$1 name=$2 address segment_offset segment_address
    address=$(nm -C "$elf" | awk -v name="$name" '{ a = $1; t = $2; $1 = ""; $2 = ""; sub(/^ +/, ""); if (t == "T" && $0 == name) { print a; exit } }')
    [ -n "$address" ] || { echo "no symbol $name in $elf" >&2; exit 1; }
    # The executable segment: its file offset and its address.
    read -r segment_offset segment_address < <(readelf -lW "$elf" | awk '/LOAD/ && /R E/ { print $2, $3; exit }')
    printf '0x%x' $((0x$address - segment_address + segment_offset))
}

for binary in "$@"; do
    binary=$(realpath "$binary")
    group=served_$$
    for symbol in _rjem_malloc _rjem_mallocx _rjem_rallocx _rjem_calloc 'harmonia_serve::auth::tokens::TokenStore::verify'; do
        event=${symbol##*:}; event=${event#_rjem_}
        echo "p:$group/$event $binary:$(offset "$binary" "$symbol")" >> "$tracing/uprobe_events"
    done
    # Connections an earlier run left in TIME_WAIT hold ephemeral ports.
    while [ "$(ss -tan state time-wait | wc -l)" -gt 3000 ]; do sleep 3; done
    "$binary" bench --only concurrency > /dev/null 2>&1 &
    bench=$!
    sleep 3
    counts=$(perf stat --per-thread -x, -e "$group:malloc,$group:mallocx,$group:rallocx,$group:calloc,$group:verify" \
        -p "$bench" -- sleep 2 2>&1 >/dev/null)
    kill "$bench" 2>/dev/null || true
    wait "$bench" 2>/dev/null || true
    for event in malloc mallocx rallocx calloc verify; do
        echo "-:$group/$event" >> "$tracing/uprobe_events"
    done
    echo "$counts" | awk -F, -v binary="$binary" '
        $1 ~ /^bench-serve-/ && $2 ~ /^[0-9]+$/ {
            if ($4 ~ /verify$/) requests += $2; else allocations += $2
        }
        END {
            if (requests == 0) { print binary ": no request counted"; exit 1 }
            printf "%s: %d allocations over %d requests on the server threads, %.1f per request\n",
                binary, allocations, requests, allocations / requests
        }'
done
