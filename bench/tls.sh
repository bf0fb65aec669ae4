#!/usr/bin/env bash
# lab all against one server over TLS (sslmode=verify-full) and over
# plaintext, side by side, RUNS times each, interleaved: each run's wall time,
# the medians and their ratio (the issue's bound: TLS at most 1.10x plaintext),
# then one connection's handshake cost (psql, TLS and plaintext, 20 each).
#   bench/tls.sh [RUNS]
# The server is `lab server --tls` with its pg_hba opened to plaintext too,
# so both runs reach the same server.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-3}
cargo build --release -q
LAB=target/release/lab
tmp=$(mktemp -d)
server_pid=
cleanup() {
    if [ -n "$server_pid" ]; then kill -INT "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
    rm -rf "$tmp"
}
trap cleanup EXIT
"$LAB" server --tls --schema lab_bench_tls >"$tmp/server" 2>&1 &
server_pid=$!
for _ in $(seq 1 300); do
    grep -q '^DATABASE_URL=' "$tmp/server" && break
    kill -0 "$server_pid" 2>/dev/null || { cat "$tmp/server"; exit 1; }
    sleep 0.1
done
TLS_URL=$(sed -n 's/^DATABASE_URL=//p' "$tmp/server")
PORT=$(echo "$TLS_URL" | sed -E 's/.*:([0-9]+)\/.*/\1/')
RUN_DIR=$(dirname "$(echo "$TLS_URL" | sed -E 's/.*sslrootcert=//')")
PLAIN_URL="postgres://postgres@127.0.0.1:$PORT/postgres?sslmode=disable"
# Plaintext allowed as well, on the same server.
printf 'local all all trust\nhost all all 127.0.0.1/32 trust\n' >"$RUN_DIR/data/pg_hba.conf"
psql -X -q -h "$RUN_DIR" -p "$PORT" -U postgres -d postgres -c 'SELECT pg_reload_conf()' >/dev/null
echo "server: $(head -1 "$tmp/server")"

median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
for i in $(seq 1 "$RUNS"); do
    for kind in plain tls; do
        url=$PLAIN_URL; [ "$kind" = tls ] && url=$TLS_URL
        start=$(date +%s.%N)
        rc=0
        "$LAB" all --schema lab_bench_tls --format json --database-url "$url" >"$tmp/$kind-$i.json" || rc=$?
        end=$(date +%s.%N)
        echo "$end - $start" | bc >>"$tmp/$kind.times"
        # A run that ended early would flatter its side: each says how it ended
        # and how many variants it ran.
        variants=$(python3 -c 'import json,sys; print(sum(len(s["variants"]) for s in json.load(sys.stdin)["scenarios"]))' <"$tmp/$kind-$i.json" 2>/dev/null || echo "?")
        printf 'run %d %-5s %6.2f s  exit %d, %s variants\n' "$i" "$kind" "$(tail -1 "$tmp/$kind.times")" "$rc" "$variants"
    done
done
p=$(median <"$tmp/plain.times"); t=$(median <"$tmp/tls.times")
printf 'median: plaintext %.2f s, TLS verify-full %.2f s, ratio %.3f (bound 1.10)\n' "$p" "$t" "$(echo "$t / $p" | bc -l)"
for kind in plain tls; do
    url=$PLAIN_URL; [ "$kind" = tls ] && url=$TLS_URL
    start=$(date +%s.%N)
    for _ in $(seq 1 20); do env -i PATH="$PATH" HOME="$tmp" psql -X -Atc 'SELECT 1' "$url" >/dev/null; done
    end=$(date +%s.%N)
    printf 'one connection (psql, %s): %.1f ms\n' "$kind" "$(echo "($end - $start) * 1000 / 20" | bc -l)"
done
