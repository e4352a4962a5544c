#!/usr/bin/env bash
# Installs the third-party MCP servers kun-mcp's tests run against, at pinned versions, into
# target/ so a fresh clone stays self-contained:
#
#   target/ci-node/node_modules/.bin/mcp-server-everything   @modelcontextprotocol/server-everything (npm)
#   target/ci-venv/bin/mcp-server-time                       mcp-server-time (PyPI)
#
# Idempotent: a server already installed at its pinned version is left alone. The tests find
# the servers there (or through KUN_MCP_SERVER_EVERYTHING / KUN_MCP_SERVER_TIME), and fail
# under CI=true when they are missing.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

EVERYTHING_VERSION="2026.8.31"
TIME_VERSION="2026.10.19"

NODE_PREFIX="target/ci-node"
VENV="target/ci-venv"

# --- @modelcontextprotocol/server-everything (npm) -------------------------------------------
everything_manifest="$NODE_PREFIX/node_modules/@modelcontextprotocol/server-everything/package.json"
installed_everything=""
if [[ -f "$everything_manifest" ]]; then
    installed_everything="$(node -p "require('./$everything_manifest').version" 2>/dev/null || true)"
fi
if [[ "$installed_everything" == "$EVERYTHING_VERSION" ]]; then
    echo "@modelcontextprotocol/server-everything $EVERYTHING_VERSION: already installed"
else
    mkdir -p "$NODE_PREFIX"
    # Saved to target/ci-node/package.json, so installs of other tools into the same prefix
    # keep it.
    npm install --prefix "$NODE_PREFIX" --save-exact --no-audit --no-fund --loglevel=error \
        "@modelcontextprotocol/server-everything@$EVERYTHING_VERSION"
    echo "@modelcontextprotocol/server-everything $EVERYTHING_VERSION: installed"
fi

# --- mcp-server-time (PyPI) ------------------------------------------------------------------
if [[ ! -x "$VENV/bin/python" ]]; then
    python3 -m venv "$VENV"
fi
installed_time="$("$VENV/bin/python" -c 'import importlib.metadata as m; print(m.version("mcp-server-time"))' 2>/dev/null || true)"
if [[ "$installed_time" == "$TIME_VERSION" ]]; then
    echo "mcp-server-time $TIME_VERSION: already installed"
else
    # Its dependencies, pinned to the versions the tests were written against.
    constraints="$(mktemp)"
    trap 'rm -f "$constraints"' EXIT
    cat >"$constraints" <<'PINS'
annotated-types==0.8.0
anyio==4.16.0
attrs==26.1.0
cffi==2.1.1
cryptography==50.0.2
h11==0.16.0
httpcore2==2.16.2
httpx2==2.16.2
idna==3.20
jsonschema==4.26.0
jsonschema-specifications==2025.9.1
mcp==2.3.0
mcp-types==2.3.0
opentelemetry-api==1.45.2
pycparser==3.12
pydantic==2.14.4
pydantic_core==2.50.5
PyJWT==2.15.1
python-multipart==0.0.34
referencing==0.37.0
rpds-py==2026.9.1
sse-starlette==3.7.0
starlette==1.10.0
truststore==0.10.5
typing-inspection==0.4.5
tzdata==2026.6
tzlocal==5.4.5
uvicorn==0.54.0
PINS
    "$VENV/bin/pip" install --quiet --disable-pip-version-check \
        --constraint "$constraints" "mcp-server-time==$TIME_VERSION"
    echo "mcp-server-time $TIME_VERSION: installed"
fi
