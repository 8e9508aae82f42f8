#!/usr/bin/env bash
# Build the JavaScript tool into one component, in one command:
#     build.sh [--world public|workspace] [OUTPUT]
# The world is the capability the tool imports: `public` (public-tool,
# src/public_app.js) or `workspace` (workspace-tool, src/workspace_app.js);
# the default is the line `world=` below. OUTPUT defaults to the tool's
# name next to this script.
# Needs componentize-js 0.23.0 (the engine `jco componentize` drives): the
# one in target/test-deps/node of the Harmonia checkout holding this
# template (scripts/install-test-deps.sh installs it), else
# `componentize-js` on PATH (npm install -g @bytecodealliance/componentize-js@0.23.0).
# The WIT is wit/tools.wit in this directory or an ancestor (the checkout's),
# or $HARMONIA_WIT.
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
world=public
here="$(cd "$(dirname "$0")" && pwd)"
if [ "${1:-}" = --world ]; then
  world="${2:-}"
  shift 2 || true
fi
case "$world" in
  public) tool=hn_top_story ;;
  workspace) tool=posts_by_weekday ;;
  *) echo "build.sh: --world must be public or workspace, not '$world'" >&2; exit 2 ;;
esac
out="$(realpath -m "${1:-$here/$tool.wasm}")"

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
"$componentize_js" "src/${world}_app.js" --wit "$wit" --world-name "$world-tool" --disable "${disable[@]}" --out "$out" >/dev/null
echo "$out"
