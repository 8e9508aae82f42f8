#!/usr/bin/env bash
# Harmonia against its peers (issue 28): builds the pinned Wassette and
# hyper-mcp from the source snapshots in bench/peers/vendor/, the trivial
# tool for each (wassette-tool/, hyper-mcp-tool/), and harmonia (release),
# then runs `harmonia bench --only peers --peers DIR` with any arguments
# given after `--`. Opt-in: not part of `.ci/run` nor the README's test
# command (the peers' release builds take tens of minutes).
#
#   bench/peers/build.sh                 # build what is missing, then measure
#   bench/peers/build.sh --build-only    # build only
#   bench/peers/build.sh -- --json       # measure, one JSON object on stdout
#   bench/peers/build.sh -- --quick      # a short run
#
# Everything goes under $PEERS_WORK (default target-peers/ at the root,
# ignored by git and excluded from the cargo workspace): sources in src/,
# each peer's target dir, and bin/ (the binaries and tools the bench reads).
# Every build runs under `nice -n 19` ($PEERS_NICE to change) with the
# project's toolchain ($PEERS_TOOLCHAIN; hyper-mcp's own file asks for
# 1.90, which is not installed here, and builds with 1.95.0). Crates come
# from crates.io through cargo, each peer's Cargo.lock as committed
# (`--locked`). A peer that does not build is reported with its log, and
# the bench skips it, naming it.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
work=${PEERS_WORK:-$root/target-peers}
bin=$work/bin
toolchain=${PEERS_TOOLCHAIN:-$(sed -n 's/^channel = "\(.*\)"/\1/p' "$root/rust-toolchain.toml")}
read -r -a nice <<<"${PEERS_NICE:-nice -n 19}"
export RUSTUP_TOOLCHAIN=$toolchain

# The pinned commits (the snapshots' names say the same).
wassette_commit=8940e27d1d59c4790dcf8bb4f85b1fd422c0f289   # microsoft/wassette, 2025-08-09, v0.2.0
hyper_mcp_commit=f3e1aff5e6f07a15746d62cd3349bc0e44e6347a  # tuananh/hyper-mcp, 2026-01-11, v0.1.8

build_only=false
if [ "${1:-}" = "--build-only" ]; then build_only=true; shift; fi
if [ "${1:-}" = "--" ]; then shift; fi

mkdir -p "$work/src" "$bin"

# Unpack a snapshot unless that commit is already there.
unpack() {
    local name=$1 commit=$2 dir=$work/src/$1
    if [ "$(cat "$dir/.pinned" 2>/dev/null)" != "$commit" ]; then
        rm -rf "$dir"
        tar -xzf "$here/vendor/$name-$commit.tar.gz" -C "$work/src"
        echo "$commit" >"$dir/.pinned"
    fi
}

# Build a peer's binary into bin/; on failure say so with the log's tail.
build_peer() {
    local name=$1 commit=$2
    unpack "$name" "$commit"
    local log=$work/$name-build.log
    echo "building $name at $commit (log: $log)" >&2
    if (cd "$work/src/$name" && CARGO_TARGET_DIR=$work/$name "${nice[@]}" \
        cargo build --release --locked --bin "$name") >"$log" 2>&1; then
        cp "$work/$name/release/$name" "$bin/$name"
    else
        rm -f "$bin/$name"
        echo "$name did not build; the end of $log:" >&2
        tail -n 30 "$log" >&2
    fi
}

# The trivial tools: a WASI 0.2 component for Wassette, an Extism plugin
# for hyper-mcp.
for target in wasm32-wasip2 wasm32-unknown-unknown; do
    rustup target list --installed | grep -qx "$target" || rustup target add "$target"
done
(cd "$here/wassette-tool" && CARGO_TARGET_DIR=$work/tools "${nice[@]}" \
    cargo build --release --locked --target wasm32-wasip2)
cp "$work/tools/wasm32-wasip2/release/bench_peer_wassette_tool.wasm" "$bin/trivial-probe.wasm"
(cd "$here/hyper-mcp-tool" && CARGO_TARGET_DIR=$work/tools "${nice[@]}" \
    cargo build --release --locked --target wasm32-unknown-unknown)
cp "$work/tools/wasm32-unknown-unknown/release/bench_peer_hyper_mcp_tool.wasm" "$bin/trivial-probe.extism.wasm"

build_peer wassette "$wassette_commit"
build_peer hyper-mcp "$hyper_mcp_commit"

(cd "$root" && "${nice[@]}" cargo build --release --workspace)

$build_only && exit 0
exec "$root/target/release/harmonia" bench --only peers --peers "$bin" "$@"
