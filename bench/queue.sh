#!/usr/bin/env bash
# Queue benchmark (issue: lab queue). Starts a throwaway cluster with `lab server`
# and prints:
#   1. skip-locked efficiency at the seed's defaults (1000 messages, 4 workers,
#      batches of 10, 20 ms of work), several runs;
#   2. messages per second with no work (--work-ms 0, MESSAGES messages) for lab's
#      workers and for pgbench running the same dequeue transaction with the same
#      number of clients against the same cluster, and the ratio.
# Settings: MESSAGES (100000), WORKERS (4), BATCH (10), RUNS (5); LAB_PG_BIN picks the binaries.
set -euo pipefail
cd "$(dirname "$0")/.."
MESSAGES=${MESSAGES:-100000}
WORKERS=${WORKERS:-4}
BATCH=${BATCH:-10}
RUNS=${RUNS:-5}

cargo build --release -q
LAB=target/release/lab
tmp=$(mktemp -d)
server_pid=
cleanup() {
    if [ -n "$server_pid" ]; then kill -INT "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
    rm -rf "$tmp"
}
trap cleanup EXIT

"$LAB" server --schema lab_bench >"$tmp/server" 2>&1 &
server_pid=$!
for _ in $(seq 1 300); do
    grep -q '^DATABASE_URL=' "$tmp/server" && break
    kill -0 "$server_pid" 2>/dev/null || { cat "$tmp/server"; exit 1; }
    sleep 0.1
done
URL=$(sed -n 's/^DATABASE_URL=//p' "$tmp/server")
BIN=$(sed -n 's/^binaries: //p' "$tmp/server")
PGBENCH="$BIN/pgbench"
PSQL="$BIN/psql"
[ -x "$PSQL" ] || PSQL=psql
echo "server: $(head -1 "$tmp/server")"

metric() { python3 -c "import json,sys; v=json.load(sys.stdin)['variants'][0]; print(v['metrics']['$1'])"; }

echo
echo "1. skip-locked at the seed's defaults (1000 messages, 4 workers, batch 10, 20 ms work); target efficiency >= 0.95"
effs=()
for i in $(seq 1 "$RUNS"); do
    # ideal / elapsed to three places (the report rounds to two).
    e=$("$LAB" queue --variant skip-locked --database-url "$URL" --schema lab_bench_q --format json |
        python3 -c "import json,sys; m=json.load(sys.stdin)['variants'][0]['metrics']; print(f\"{m['ideal_ms']/m['elapsed_ms']:.3f}\")")
    effs+=("$e")
    echo "   run $i: efficiency $e"
done
printf '%s\n' "${effs[@]}" | sort -n | awk '{a[NR]=$1} END {print "   median efficiency: " a[int((NR+1)/2)]}'

echo
echo "2. throughput with no work: $MESSAGES messages, $WORKERS workers/clients, batch $BATCH"
lab_rate=$("$LAB" queue --variant skip-locked --messages "$MESSAGES" --workers "$WORKERS" --batch "$BATCH" --work-ms 0 \
    --database-url "$URL" --schema lab_bench_q --wait-timeout 60 --format json | metric msgs_per_s)
echo "   lab:     $lab_rate messages/s"

# The same table, filled the same way, for pgbench.
PGOPTIONS="-c client_min_messages=warning" "$PSQL" -q "$URL" -v schema=lab_bench_pgb -f lab/schema.sql -f lab/seed.sql >/dev/null
"$PSQL" -q "$URL" -c "SET search_path TO lab_bench_pgb;
    INSERT INTO outbox_messages (outbox_message_id, payload)
    SELECT i, 'order-shipped ' || i FROM generate_series(1, $MESSAGES) AS i;
    ANALYZE outbox_messages;"
cat >"$tmp/dequeue.sql" <<SQL
BEGIN;
SELECT coalesce(array_agg(outbox_message_id), '{}') AS ids FROM (SELECT outbox_message_id FROM outbox_messages WHERE processed_at IS NULL ORDER BY outbox_message_id LIMIT $BATCH FOR UPDATE SKIP LOCKED) AS batch \gset
UPDATE outbox_messages SET processed_at = now(), processed_by = 'pgbench' WHERE outbox_message_id = ANY (:ids);
COMMIT;
SQL
per_client=$(( (MESSAGES + BATCH * WORKERS - 1) / (BATCH * WORKERS) ))
PGOPTIONS="-c search_path=lab_bench_pgb" "$PGBENCH" -n -M prepared -c "$WORKERS" -j "$WORKERS" -t "$per_client" \
    -f "$tmp/dequeue.sql" "$URL" >"$tmp/pgbench" 2>&1 || { cat "$tmp/pgbench"; exit 1; }
tps=$(sed -n 's/^tps = \([0-9.]*\) .*/\1/p' "$tmp/pgbench")
done_count=$("$PSQL" -qAt "$URL" -c "SELECT count(*) FROM lab_bench_pgb.outbox_messages WHERE processed_at IS NOT NULL")
txns=$(( per_client * WORKERS ))
pg_rate=$(python3 -c "print(round($tps * $done_count / $txns))")
echo "   pgbench: $pg_rate messages/s ($tps transactions/s, $done_count messages in $txns transactions)"
python3 -c "print('   ratio lab / pgbench: %.2f (target >= 0.90)' % ($lab_rate / $pg_rate))"
PGOPTIONS="-c client_min_messages=warning" "$PSQL" -q "$URL" -c "DROP SCHEMA lab_bench_pgb CASCADE" >/dev/null
