#!/usr/bin/env bash
# Harmonia against its peers: builds the pinned Wassette and hyper-mcp
# from sources the user got (this repository holds none of their code),
# the trivial tool for each (wassette-tool/, hyper-mcp-tool/), and harmonia
# (release), then runs `harmonia bench --only peers --peers DIR` with any
# arguments given after `--`. Opt-in: not part of `.ci/run` nor the
# README's test command (the peers' release builds take tens of minutes).
#
#   bench/peers/build.sh --wassette SRC --hyper-mcp SRC [--build-only] [-- BENCH ARGS]
#
# Each SRC (or $WASSETTE_SRC, $HYPER_MCP_SRC) is a git checkout at the
# pinned commit (checked: HEAD is that commit, no tracked file changed) or
# a source archive whose SHA-256 is the pinned one (README.md says where
# to get both). A peer without a good source is skipped, saying why, and
# the bench measures the others.
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

# The pinned commits, and the SHA-256 of each one's source archive (the
# trimmed `git archive` snapshots README.md names).
wassette_commit=8940e27d1d59c4790dcf8bb4f85b1fd422c0f289   # microsoft/wassette, 2025-08-09, v0.2.0
wassette_sha256=d97580528fc818e2235b09eeb937b2fb1e5d6a5776e270366cb30cc532333878
hyper_mcp_commit=f3e1aff5e6f07a15746d62cd3349bc0e44e6347a  # tuananh/hyper-mcp, 2026-01-11, v0.1.8
hyper_mcp_sha256=bc73f32feb0fd55dd558f8f5b5f3632f8882a545cfd7e3f34ec79de13ae8ba99

build_only=false
wassette_src=${WASSETTE_SRC:-}
hyper_mcp_src=${HYPER_MCP_SRC:-}
while [ $# -gt 0 ]; do
    case "$1" in
        --build-only) build_only=true; shift ;;
        --wassette) wassette_src=$2; shift 2 ;;
        --hyper-mcp) hyper_mcp_src=$2; shift 2 ;;
        --) shift; break ;;
        *) echo "build.sh: unknown argument $1 (see the comment at its top)" >&2; exit 2 ;;
    esac
done

mkdir -p "$work/src" "$bin"

# Put peer $1's source at commit $2 in src/$1 from $4 (a checkout at that
# commit, or an archive whose SHA-256 is $3), checked; false, saying why,
# when there is none or it is not the pinned one.
unpack() {
    local name=$1 commit=$2 sha256=$3 from=$4 dir=$work/src/$1
    if [ -z "$from" ]; then
        echo "skipping $name: no source given (--$name SRC: a checkout at $commit, or the archive bench/peers/README.md names)" >&2
        return 1
    fi
    if [ -d "$from" ] && git -C "$from" rev-parse --git-dir >/dev/null 2>&1; then
        local head
        head=$(git -C "$from" rev-parse HEAD)
        if [ "$head" != "$commit" ]; then
            echo "skipping $name: $from is at $head, not the pinned $commit (git -C $from checkout $commit)" >&2
            return 1
        fi
        if [ -n "$(git -C "$from" status --porcelain --untracked-files=no)" ]; then
            echo "skipping $name: $from has changes to tracked files; the pinned commit is measured as it is" >&2
            return 1
        fi
        rm -rf "$dir" && mkdir -p "$dir"
        git -C "$from" archive --format=tar "$commit" | tar -x -C "$dir"
    elif [ -f "$from" ]; then
        local found
        found=$(sha256sum "$from" | cut -d' ' -f1)
        if [ "$found" != "$sha256" ]; then
            echo "skipping $name: $from has SHA-256 $found, not the pinned $sha256" >&2
            return 1
        fi
        rm -rf "$dir"
        tar -xzf "$from" -C "$work/src"
    else
        echo "skipping $name: $from is neither a git checkout nor an archive" >&2
        return 1
    fi
    echo "$commit" >"$dir/.pinned"
}

# Build a peer's binary into bin/ (none when its source is missing); on
# failure say so with the log's tail.
build_peer() {
    local name=$1 commit=$2 sha256=$3 from=$4
    rm -f "$bin/$name"
    unpack "$name" "$commit" "$sha256" "$from" || return 0
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

build_peer wassette "$wassette_commit" "$wassette_sha256" "$wassette_src"
build_peer hyper-mcp "$hyper_mcp_commit" "$hyper_mcp_sha256" "$hyper_mcp_src"

(cd "$root" && "${nice[@]}" cargo build --release --workspace)

$build_only && exit 0
exec "$root/target/release/harmonia" bench --only peers --peers "$bin" "$@"
