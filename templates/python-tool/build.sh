#!/usr/bin/env bash
# Build the Python tool into one component, in one command:
#     build.sh [--world public|workspace] [OUTPUT]
# The world is the capability the tool imports: `public` (public-tool,
# src/public_app.py) or `workspace` (workspace-tool, src/workspace_app.py);
# the default is the line `world=` below. OUTPUT defaults to the tool's
# name next to this script.
# Needs componentize-py 0.25.1: the one in target/test-deps/venv of the
# Harmonia checkout holding this template (scripts/install-test-deps.sh
# installs it), else `componentize-py` on PATH (pip install componentize-py==0.25.1).
# The WIT is wit/tools.wit in this directory or an ancestor (the checkout's),
# or $HARMONIA_WIT.
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

if venv="$(find_up target/test-deps/venv)" && [ -x "$venv/bin/python" ] && [ -e "$venv/bin/componentize-py" ]; then
  # Through the venv's own python, so a moved or copied venv still works.
  componentize_py=("$venv/bin/python" "$venv/bin/componentize-py")
elif command -v componentize-py >/dev/null; then
  componentize_py=(componentize-py)
else
  echo "build.sh: componentize-py not found: run scripts/install-test-deps.sh, or pip install componentize-py==0.25.1" >&2
  exit 1
fi

mkdir -p "$(dirname "$out")"
cd "$here"
# Only src/ is the app (the tests and the output stay out of the component);
# no bytecode is written into the template.
PYTHONDONTWRITEBYTECODE=1 "${componentize_py[@]}" -q -d "$wit" -w "$world-tool" componentize "${world}_app" -p "$here/src" -o "$out"
echo "$out"
