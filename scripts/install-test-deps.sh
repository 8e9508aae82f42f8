#!/usr/bin/env bash
# Install the foreign toolchains and clients the tests use, pinned, into
# target/test-deps (kept between runs; a no-op when already there):
#   - a Python virtual environment with componentize-py (Python plugins),
#     the official MCP Python SDK (the client of the `serve` tests) and
#     the OpenAI Agents SDK (its MCP classes, strict schemas, an agent
#     with a scripted model), and kubernetes-validate (deploy/kubernetes/'s
#     manifests checked offline against Kubernetes' JSON schemas, which it
#     ships; its PyYAML reads them for the deploy test);
#   - a second Python virtual environment, venv-langchain, with LangChain's
#     MCP adapters: every release of langchain-mcp-adapters needs the MCP
#     Python SDK 1.x (0.3.2 pins mcp<2; the releases that accept 2.x by
#     their pins fail to import with it), so they get their own, with the
#     newest 1.x, beside the first venv's mcp 2.3.0;
#   - jco and componentize-js from npm (JavaScript plugins);
#   - nginx from Debian's packages (the load balancer of the replicas
#     test), its service kept from starting: tests run their own on
#     127.0.0.1;
#   - docker-registry from Debian's packages (the CNCF distribution
#     registry the OCI plugin tests push to and pull from), its service
#     kept from starting: tests run their own on 127.0.0.1 with a
#     temporary storage directory;
#   - PostgreSQL from Debian's packages (the shared store of replicas on
#     several machines), its service kept from starting: tests run their
#     own servers (initdb into a temporary directory), on 127.0.0.1 or
#     inside the network namespaces of the multi-host test; and iproute2
#     (`ip netns`, veth, bridges) for that test;
#   - chromium from Debian's packages, and playwright-core and axe-core
#     from npm (the review page's browser test drives that Chromium; no
#     browser is downloaded);
#   - MCP clients from npm: the official TypeScript SDK 1.x (handshake
#     revisions; with express and jose for the tests' loopback
#     authorization server) and its 2.x client (the stateless revision,
#     2026-07-28), the MCP Inspector (its CLI mode), and the official
#     conformance suite, 0.1.16 and the 0.2.0-alpha line (as
#     `mcp-conformance-next`, for the 2026-07-28 scenarios; with glob,
#     whose globSync it imports from `fs` on Node 20 through
#     serve/tests/clients/node_hooks.mjs).
# The tests that need them fail, naming this script, when they are missing.
set -euo pipefail
cd "$(dirname "$0")/.."

COMPONENTIZE_PY=0.25.1
MCP=2.3.0
JCO=1.35.0
COMPONENTIZE_JS=0.23.0
PLAYWRIGHT_CORE=1.65.1
AXE_CORE=4.14.1
MCP_TS_SDK=1.32.2
MCP_INSPECTOR=0.21.2
MCP_CONFORMANCE=0.1.16
MCP_CONFORMANCE_NEXT=0.2.0-alpha.12
MCP_TS_CLIENT=2.4.0
EXPRESS=5.3.0
JOSE=6.2.18
GLOB=11.1.0
OPENAI_AGENTS=0.24.0
LANGCHAIN_MCP_ADAPTERS=0.3.2
LANGCHAIN_CORE=1.8.3
LANGCHAIN_MCP=1.30.0
KUBERNETES_VALIDATE=1.37.0

# Debian's packages the tests run, installed together (one `apt-get
# update`), their services kept from starting: tests start their own.
missing=()
[ -x /usr/sbin/nginx ] || command -v nginx >/dev/null || missing+=(nginx)
[ -x /usr/bin/docker-registry ] || missing+=(docker-registry)
[ -x /usr/bin/chromium ] || missing+=(chromium)
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || missing+=(postgresql)
command -v ip >/dev/null || [ -x /usr/sbin/ip ] || missing+=(iproute2)
if [ "${#missing[@]}" -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    if [ ! -e /usr/sbin/policy-rc.d ]; then
      printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d
      trap 'rm -f /usr/sbin/policy-rc.d' EXIT
    fi
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  else
    echo "install-test-deps: ${missing[*]} missing; install Debian's packages (as root: apt-get install ${missing[*]})" >&2
    exit 1
  fi
fi

deps=target/test-deps
mkdir -p "$deps"

stamp="$deps/.installed-py$COMPONENTIZE_PY-mcp$MCP-jco$JCO-cjs$COMPONENTIZE_JS-pw$PLAYWRIGHT_CORE-axe$AXE_CORE-mcpts$MCP_TS_SDK-insp$MCP_INSPECTOR-conf$MCP_CONFORMANCE-confnext$MCP_CONFORMANCE_NEXT-tsclient$MCP_TS_CLIENT-oa$OPENAI_AGENTS-lcmcp$LANGCHAIN_MCP_ADAPTERS-lccore$LANGCHAIN_CORE-lcsdk$LANGCHAIN_MCP-kv$KUBERNETES_VALIDATE"
[ -e "$stamp" ] && exit 0

command -v python3 >/dev/null || { echo "install-test-deps: python3 is required" >&2; exit 1; }
command -v npm >/dev/null || { echo "install-test-deps: npm (Node.js 20+) is required" >&2; exit 1; }

# A virtual environment made elsewhere and copied here (a target dir
# copied from another checkout) has scripts whose first line names the
# other one's Python: it is made again rather than installed through.
# pip runs as `python -m pip`, never through such a script.
venv() {
  local dir="$1" here
  if [ -e "$dir/bin/pip" ]; then
    here="$(cd "$dir" && pwd)"
    case "$(head -n 1 "$dir/bin/pip")" in
      "#!$here/bin/python"*) python3 -m venv "$dir" ;;
      *) python3 -m venv --clear "$dir" ;;
    esac
  else
    python3 -m venv "$dir"
  fi
}
venv "$deps/venv"
"$deps/venv/bin/python" -m pip install --quiet --disable-pip-version-check \
  "componentize-py==$COMPONENTIZE_PY" "mcp==$MCP" "openai-agents==$OPENAI_AGENTS" \
  "kubernetes-validate==$KUBERNETES_VALIDATE"
venv "$deps/venv-langchain"
"$deps/venv-langchain/bin/python" -m pip install --quiet --disable-pip-version-check \
  "langchain-mcp-adapters==$LANGCHAIN_MCP_ADAPTERS" "langchain-core==$LANGCHAIN_CORE" "mcp==$LANGCHAIN_MCP"

# One install for every npm package: a second `npm install` into the same
# tree has pruned componentize-js's nested preview2-shim. playwright-core
# never downloads a browser (only the `playwright` package does): the
# review page's test launches /usr/bin/chromium.
rm -rf "$deps/node"
mkdir -p "$deps/node"
(cd "$deps/node" && echo '{"private":true}' > package.json \
  && npm install --silent --no-audit --no-fund \
       "@bytecodealliance/jco@$JCO" "@bytecodealliance/componentize-js@$COMPONENTIZE_JS" \
       "playwright-core@$PLAYWRIGHT_CORE" "axe-core@$AXE_CORE" \
       "@modelcontextprotocol/sdk@$MCP_TS_SDK" "@modelcontextprotocol/inspector@$MCP_INSPECTOR" \
       "@modelcontextprotocol/conformance@$MCP_CONFORMANCE" \
       "mcp-conformance-next@npm:@modelcontextprotocol/conformance@$MCP_CONFORMANCE_NEXT" \
       "@modelcontextprotocol/client@$MCP_TS_CLIENT" \
       "express@$EXPRESS" "jose@$JOSE" "glob@$GLOB")

rm -f "$deps"/.installed-*
touch "$stamp"
echo "install-test-deps: componentize-py $COMPONENTIZE_PY, mcp $MCP, jco $JCO, componentize-js $COMPONENTIZE_JS, playwright-core $PLAYWRIGHT_CORE, axe-core $AXE_CORE, MCP TypeScript SDK $MCP_TS_SDK, Inspector $MCP_INSPECTOR, conformance $MCP_CONFORMANCE and $MCP_CONFORMANCE_NEXT, MCP TypeScript client $MCP_TS_CLIENT, openai-agents $OPENAI_AGENTS, langchain-mcp-adapters $LANGCHAIN_MCP_ADAPTERS (langchain-core $LANGCHAIN_CORE, mcp $LANGCHAIN_MCP), kubernetes-validate $KUBERNETES_VALIDATE in $deps"
