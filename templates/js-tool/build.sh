#!/usr/bin/env bash
# Build the JavaScript tool into one component, in one command:
#     templates/js-tool/build.sh [OUTPUT]     (default: hn_top_story.wasm next to this script)
# Needs componentize-js 0.23.0 (the engine `jco componentize` drives): the
# one in target/test-deps/node of the Harmonia checkout holding this
# template (scripts/install-test-deps.sh installs it), else
# `componentize-js` on PATH (npm install -g @bytecodealliance/componentize-js@0.23.0).
# The WIT is the checkout's wit/tools.wit, or $HARMONIA_WIT when the
# template was copied out of the checkout.
#
# Every WASI feature of the JS runtime is disabled, so the component
# imports only harmonia:tools and loads under any Harmonia config: no
# wasi:http (fetch), no clocks (Date.now is fixed, timers trap), no random
# (Math.random is deterministic), no stdio (console output is dropped and
# an uncaught exception traps without a message). JS_TOOL_STDIO=1 keeps
# stdio for debugging: console.error then reaches the host's debug log
# (HARMONIA_LOG=debug), and the component also imports wasi:cli, wasi:io
# and wasi:filesystem (the runtime's adapter needs it; Harmonia links it
# with no preopens).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="$(realpath -m "${1:-$here/hn_top_story.wasm}")"

find_up() { # the nearest ancestor of the template holding $1
  local dir="$here"
  while [ "$dir" != / ]; do
    [ -e "$dir/$1" ] && { echo "$dir/$1"; return 0; }
    dir="$(dirname "$dir")"
  done
  return 1
}

wit="${HARMONIA_WIT:-$(find_up wit/tools.wit || true)}"
[ -n "$wit" ] && [ -e "$wit" ] || { echo "build.sh: wit/tools.wit not found; set HARMONIA_WIT to it" >&2; exit 1; }
componentize_js="$(find_up target/test-deps/node/node_modules/.bin/componentize-js || command -v componentize-js || true)"
[ -n "$componentize_js" ] || {
  echo "build.sh: componentize-js not found: run scripts/install-test-deps.sh, or npm install -g @bytecodealliance/componentize-js@0.23.0" >&2
  exit 1
}
command -v node >/dev/null || { echo "build.sh: node (Node.js 20+) is required" >&2; exit 1; }

disable=(stdio random clocks http fetch-event)
[ "${JS_TOOL_STDIO:-0}" = 1 ] && disable=(random clocks http fetch-event)

mkdir -p "$(dirname "$out")"
cd "$here"
"$componentize_js" src/app.js --wit "$wit" --world-name public-tool --disable "${disable[@]}" --out "$out" >/dev/null
echo "$out"
