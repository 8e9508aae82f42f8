#!/usr/bin/env bash
# Regenerate the README's two review screenshots from catalogue cases:
#   docs/review-accepted.png   grounded-job-status (accepted)
#   docs/review-refused.png    reject-authority-overreach (mutation_claim)
# `harmonia review` writes each page; Debian's headless Chromium (installed
# by scripts/install-test-deps.sh) photographs its first screen.
set -euo pipefail
cd "$(dirname "$0")/.."

chromium=/usr/bin/chromium
[ -x "$chromium" ] || { echo "review-screenshots: $chromium is missing: run scripts/install-test-deps.sh" >&2; exit 1; }
cargo build -q -p harmonia-cli
harmonia="${CARGO_TARGET_DIR:-target}/debug/harmonia"
key=$(cat tests/catalogue/trace-key.pub)
pages=target/review-screenshots-readme
mkdir -p "$pages"

shoot() {
  local case=$1 png=$2 profile
  # Exit 1 is a refused answer: the page is written all the same.
  "$harmonia" review --key "$key" --trace "tests/catalogue/$case/trace.json" \
    --answer "tests/catalogue/$case/answer.json" --out "$pages/$case.html" >/dev/null || [ $? -eq 1 ]
  profile=$(mktemp -d)
  "$chromium" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$profile" --hide-scrollbars --window-size=1100,1000 \
    --screenshot="$png" "file://$PWD/$pages/$case.html" >/dev/null 2>&1
  rm -rf "$profile"
  echo "review-screenshots: $png"
}

shoot grounded-job-status docs/review-accepted.png
shoot reject-authority-overreach docs/review-refused.png
