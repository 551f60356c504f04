# Sourced by scripts/interop and scripts/bench-http: the Python SDK (PyPI mcp, pinned)
# in a virtualenv under the cache dir, so only the first run downloads anything.
# Sets MCP_VERSION and py (the venv's python).

MCP_VERSION=2.3.0
cache="${XDG_CACHE_HOME:-$HOME/.cache}/tern-interop"
venv="$cache/venv-mcp-$MCP_VERSION"
py="$venv/bin/python"

if ! "$py" -c "import mcp" 2>/dev/null; then
  mkdir -p "$cache"
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet "mcp==$MCP_VERSION"
fi
