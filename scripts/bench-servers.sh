# Sourced by the benchmark scripts (bench-cost, bench-rmcp): starting and stopping the
# servers they measure, tern's and the rmcp harness's, each ready only once it has
# answered a protocol request. Expects `root` (the checkout) and `target` (the cargo
# target directory); sets `pid` and `url` for the server it starts.

# A port the kernel says is free, for the rmcp harness, which takes a port number.
free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# Waits (up to 60 s: a server under callgrind starts slowly) for an MCP answer at $1.
wait_mcp() {
    for _ in $(seq 600); do
        python3 "$root/scripts/mcp-ready" "$1" >/dev/null 2>&1 && return 0
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    echo "$(basename "$0"): no MCP answer at $1" >&2
    exit 1
}

# start_server LOG COMMAND...: a tern server, which binds port 0 itself and prints
# "listening on URL".
start_server() {
    local log=$1
    shift
    "$@" >"$log" 2>"$log.err" &
    pid=$!
    url=
    for _ in $(seq 600); do
        url=$(sed -n 's/^listening on //p' "$log" | head -n1)
        [[ -n $url ]] && break
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    if [[ -z $url ]]; then
        echo "$(basename "$0"): the server did not start: $*" >&2
        cat "$log.err" >&2
        exit 1
    fi
    wait_mcp "$url"
}

# start_rmcp LOG [WRAPPER...]: the rmcp harness's server on a free port, run under
# WRAPPER (valgrind, say) when one is given. Needs build_rmcp first.
start_rmcp() {
    local log=$1 port
    shift
    port=$(free_port)
    "$@" "$rmcp_bin/server" "$port" json >"$log" 2>&1 &
    pid=$!
    url=http://127.0.0.1:$port/mcp
    wait_mcp "$url"
}

stop_server() {
    kill -TERM "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    pid=
}

# Builds the rmcp harness (../shared/bench/rmcp) outside shared/, which is read-only in
# CI; sets `rmcp_bin`.
build_rmcp() {
    local harness=$root/../shared/bench/rmcp
    [[ -f $harness/Cargo.toml ]] || { echo "$(basename "$0"): no rmcp harness at $harness" >&2; exit 1; }
    local peer_target=${RMCP_TARGET_DIR:-$target/peer-rmcp}
    CARGO_TARGET_DIR=$peer_target cargo build -q --release --manifest-path "$harness/Cargo.toml"
    rmcp_bin=$peer_target/release
}
