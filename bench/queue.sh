#!/usr/bin/env bash
# Queue benchmark (issue: lab queue). Starts a throwaway cluster with `lab server`
# and prints:
#   1. skip-locked efficiency at the seed's defaults (1000 messages, 4 workers,
#      batches of 10, 20 ms of work), several runs. Each run is followed by
#      pgbench running the seed's loop itself (BEGIN; dequeue; \sleep 20 ms;
#      mark; COMMIT) with 4 clients on the same cluster: what a C client gets on
#      this machine, for comparison;
#   2. messages per second with no work (--work-ms 0, MESSAGES messages) for lab's
#      workers and for pgbench running the same dequeue transaction with the same
#      number of clients against the same cluster, and the ratio.
# Settings: MESSAGES (100000), WORKERS (4), BATCH (10), RUNS (5, for each part);
# LAB_PG_BIN picks the binaries.
set -euo pipefail
cd "$(dirname "$0")/.."
MESSAGES=${MESSAGES:-100000}
WORKERS=${WORKERS:-4}
BATCH=${BATCH:-10}
RUNS=${RUNS:-5}

. bench/server.sh
start_server lab_bench
PGBENCH="$BIN/pgbench"
PSQL="$BIN/psql"
[ -x "$PSQL" ] || PSQL=psql

metric() { python3 -c "import json,sys; v=json.load(sys.stdin)['variants'][0]; print(v['metrics']['$1'])"; }
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

# pgbench's copy of the lab schema; fill N empties the queue and puts N messages in it.
PGB=lab_bench_pgb
PGOPTIONS="-c client_min_messages=warning" "$PSQL" -q "$URL" -v schema=$PGB -f lab/schema.sql -f lab/seed.sql >/dev/null
fill() {
    "$PSQL" -q "$URL" -c "SET search_path TO $PGB; TRUNCATE outbox_messages;
        INSERT INTO outbox_messages (outbox_message_id, payload)
        SELECT i, 'order-shipped ' || i FROM generate_series(1, $1) AS i;
        ANALYZE outbox_messages;"
}
# pgbench_tps SCRIPT CLIENTS TRANSACTIONS_PER_CLIENT: transactions per second,
# not counting the connections.
pgbench_tps() {
    PGOPTIONS="-c search_path=$PGB" "$PGBENCH" -n -M prepared -c "$2" -j "$2" -t "$3" -f "$1" "$URL" >"$tmp/pgbench" 2>&1 ||
        { cat "$tmp/pgbench" >&2; exit 1; }
    sed -n 's/^tps = \([0-9.]*\) .*/\1/p' "$tmp/pgbench"
}
pending() { "$PSQL" -qAt "$URL" -c "SELECT count(*) FROM $PGB.outbox_messages WHERE processed_at IS NULL"; }
dequeue="SELECT coalesce(array_agg(outbox_message_id), '{}') AS ids FROM (SELECT outbox_message_id FROM outbox_messages WHERE processed_at IS NULL ORDER BY outbox_message_id LIMIT $BATCH FOR UPDATE SKIP LOCKED) AS batch \\gset"
mark="UPDATE outbox_messages SET processed_at = now(), processed_by = 'pgbench' WHERE outbox_message_id = ANY (:ids);"

echo
echo "1. skip-locked at the seed's defaults (1000 messages, 4 workers, batch 10, 20 ms work); target efficiency >= 0.95"
echo "   ideal 500 ms; efficiency = ideal / elapsed"
printf 'BEGIN;\n%s\n\\sleep 20 ms\n%s\nCOMMIT;\n' "$dequeue" "$mark" >"$tmp/loop.sql"
effs=() pg_effs=()
for i in $(seq 1 "$RUNS"); do
    e=$("$LAB" queue --variant skip-locked --database-url "$URL" --schema lab_bench_q --format json | metric efficiency)
    effs+=("$e")
    # pgbench: 100 transactions of one batch each, 25 per client; elapsed = 100 / tps.
    fill 1000
    tps=$(pgbench_tps "$tmp/loop.sql" 4 25)
    left=$(pending)
    [ "$left" = 0 ] || { echo "pgbench left $left messages unprocessed" >&2; exit 1; }
    pe=$(python3 -c "print(f'{500 / (100 / $tps * 1000):.3f}')") # the report's three places
    pg_effs+=("$pe")
    echo "   run $i: lab $e   pgbench $pe"
done
echo "   median efficiency: lab $(printf '%s\n' "${effs[@]}" | median)   pgbench $(printf '%s\n' "${pg_effs[@]}" | median)"

echo
echo "2. throughput with no work: $MESSAGES messages, $WORKERS workers/clients, batch $BATCH; target lab >= 0.90 x pgbench"
echo "   lab and pgbench alternate, $RUNS times; one run alone swings by a quarter on a shared machine"
printf 'BEGIN;\n%s\n%s\nCOMMIT;\n' "$dequeue" "$mark" >"$tmp/dequeue.sql"
per_client=$(( (MESSAGES + BATCH * WORKERS - 1) / (BATCH * WORKERS) ))
txns=$(( per_client * WORKERS ))
lab_rates=() pg_rates=() ratios=()
for i in $(seq 1 "$RUNS"); do
    lab_rate=$("$LAB" queue --variant skip-locked --messages "$MESSAGES" --workers "$WORKERS" --batch "$BATCH" --work-ms 0 \
        --database-url "$URL" --schema lab_bench_q --wait-timeout 60 --format json | metric msgs_per_s)
    # The same table, filled the same way, for pgbench.
    fill "$MESSAGES"
    tps=$(pgbench_tps "$tmp/dequeue.sql" "$WORKERS" "$per_client")
    done_count=$(( MESSAGES - $(pending) ))
    pg_rate=$(python3 -c "print(round($tps * $done_count / $txns))")
    ratio=$(python3 -c "print(f'{$lab_rate / $pg_rate:.2f}')")
    lab_rates+=("$lab_rate") pg_rates+=("$pg_rate") ratios+=("$ratio")
    echo "   run $i: lab $lab_rate messages/s   pgbench $pg_rate messages/s ($done_count messages in $txns transactions)   ratio $ratio"
done
echo "   median: lab $(printf '%s\n' "${lab_rates[@]}" | median)   pgbench $(printf '%s\n' "${pg_rates[@]}" | median)   ratio lab / pgbench $(printf '%s\n' "${ratios[@]}" | median)"
PGOPTIONS="-c client_min_messages=warning" "$PSQL" -q "$URL" -c "DROP SCHEMA $PGB CASCADE" >/dev/null
