# Sourced by the benchmarks: builds lab, starts a throwaway cluster with
# `lab server --schema SCHEMA` and sets LAB, tmp (removed at exit), URL, PORT
# and BIN (the server's binaries); the server stops at exit.
cargo build --release -q
LAB=target/release/lab
tmp=$(mktemp -d)
server_pid=
cleanup() {
    if [ -n "$server_pid" ]; then kill -INT "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
    rm -rf "$tmp"
}
trap cleanup EXIT

start_server() {
    "$LAB" server --schema "$1" >"$tmp/server" 2>&1 &
    server_pid=$!
    for _ in $(seq 1 300); do
        grep -q '^DATABASE_URL=' "$tmp/server" && break
        kill -0 "$server_pid" 2>/dev/null || { cat "$tmp/server"; exit 1; }
        sleep 0.1
    done
    URL=$(sed -n 's/^DATABASE_URL=//p' "$tmp/server")
    PORT=$(echo "$URL" | sed -E 's/.*:([0-9]+)\/.*/\1/')
    BIN=$(sed -n 's/^binaries: //p' "$tmp/server")
    echo "server: $(head -1 "$tmp/server")"
}
