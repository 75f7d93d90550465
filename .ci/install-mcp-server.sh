#!/usr/bin/env bash
# Install the MCP for Unity server (PyPI `mcpforunityserver`, command
# `mcp-for-unity`) into target/venv-mcp, where tests/build_mcp.rs finds it.
# One pinned version, so a new upstream release cannot change the tests'
# outcome unnoticed; MCP_FOR_UNITY_VERSION overrides it. Idempotent: a venv
# holding exactly that version is reused, any other is rebuilt.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$root/target/venv-mcp"
version="${MCP_FOR_UNITY_VERSION:-10.3.0}"

installed() {
  "$venv/bin/pip" show mcpforunityserver 2>/dev/null | sed -n 's/^Version: //p'
}

current="$(installed || true)"
if [[ -x "$venv/bin/mcp-for-unity" && "$current" == "$version" ]]; then
  echo "mcpforunityserver $version already installed in $venv"
  exit 0
fi
if [[ -d "$venv" ]]; then
  echo "replacing the venv in $venv (it holds mcpforunityserver ${current:-none}, not $version)"
  rm -rf "$venv"
fi

python="${PYTHON:-python3}"
if ! command -v "$python" >/dev/null; then
  echo "error: $python not found; MCP for Unity needs Python 3.10+" >&2
  exit 1
fi

"$python" -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check "mcpforunityserver==$version"
echo "installed mcpforunityserver $(installed) in $venv"
