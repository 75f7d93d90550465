#!/usr/bin/env bash
# Install the MCP for Unity server (PyPI `mcpforunityserver`, command
# `mcp-for-unity`) into target/venv-mcp, where tests/build_mcp.rs finds it.
# Idempotent: an existing venv with the command is reused.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$root/target/venv-mcp"
version_spec="${MCP_FOR_UNITY_VERSION:-mcpforunityserver==10.*}"

if [[ -x "$venv/bin/mcp-for-unity" ]]; then
  echo "mcp-for-unity already installed in $venv"
  exit 0
fi

python="${PYTHON:-python3}"
if ! command -v "$python" >/dev/null; then
  echo "error: $python not found; MCP for Unity needs Python 3.10+" >&2
  exit 1
fi

"$python" -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check "$version_spec"
echo "installed $("$venv/bin/pip" show mcpforunityserver | sed -n 's/^Version: /mcpforunityserver /p') in $venv"
