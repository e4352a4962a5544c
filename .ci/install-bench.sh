#!/usr/bin/env bash
# Installs what `cargo xtask bench serve` compares against, at a pinned version, into target/:
#
#   target/ci-node/bench/node_modules/.bin/mcp-server-filesystem   @modelcontextprotocol/server-filesystem (npm)
#
# Not run by .ci/run: CI does not run benchmarks. Idempotent: an install at the pinned version
# is left alone. It has its own prefix under target/ci-node: `npm install` prunes whatever its
# prefix's package.json does not list, so sharing .ci/install-mcp.sh's prefix could remove the
# servers the tests need.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

FILESYSTEM_VERSION="2026.8.31"
NODE_PREFIX="target/ci-node/bench"

manifest="$NODE_PREFIX/node_modules/@modelcontextprotocol/server-filesystem/package.json"
installed=""
if [[ -f "$manifest" ]]; then
    installed="$(node -p "require('./$manifest').version" 2>/dev/null || true)"
fi
if [[ "$installed" == "$FILESYSTEM_VERSION" ]]; then
    echo "@modelcontextprotocol/server-filesystem $FILESYSTEM_VERSION: already installed"
else
    mkdir -p "$NODE_PREFIX"
    npm install --prefix "$NODE_PREFIX" --save-exact --no-audit --no-fund --loglevel=error \
        "@modelcontextprotocol/server-filesystem@$FILESYSTEM_VERSION"
    echo "@modelcontextprotocol/server-filesystem $FILESYSTEM_VERSION: installed"
fi
