#!/usr/bin/env bash
# lab hunt's figures, printed (never asserted):
#   - the checker: `lab hunt --check` on a history of N transactions
#     (bench/hunt-history.py: serializable, 4 sessions, 4 keys), in lab's
#     JSON lines and in Jepsen's EDN, wall time, transactions per second,
#     peak memory per transaction (the target: 300 000/s and 1 KB per
#     transaction for a million), and a predicate-read history (--workload
#     predicate's shape; the target: 100 000/s) and rw-register histories
#     (--workload rw-register's, with the server's commit timestamps; and
#     Jepsen's rw-register EDN, without: 100 000/s);
#   - the workload: `lab hunt --seconds S` at read committed, 4 sessions,
#     beside pgbench running the same transaction shape (1 to 4 operations,
#     reads and appends half and half, over 4 keys, a list kept to 32
#     elements) with 4 clients for S seconds, on the same throwaway cluster;
#   - `lab hunt --level serializable --txns SER_TXNS`: anomalies found (none
#     expected) and how long it took.
# Settings: N (1000000), S (10), SER_TXNS (100000), LAB_PG_BIN.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${N:-1000000}
S=${S:-10}
SER_TXNS=${SER_TXNS:-100000}
. bench/server.sh
start_server lab_bench
echo "$(nproc) cores"

# The checker on the same transactions in both formats: lab's JSON lines
# (keys retired after 32 appends, as lab hunt does) and Jepsen's EDN with
# Elle's list length (keys retired after 56 appends: reads of about 28
# elements, as Jepsen's list-append histories have them).
checker() { # FORMAT FILE
    /usr/bin/time -f '%e %M' -o "$tmp/time" "$LAB" hunt --check "$2" --format json >"$tmp/check.json" || true
    read -r secs kb <"$tmp/time"
    python3 - "$N" "$secs" "$kb" "$tmp/check.json" "$1" "$(stat -c %s "$2")" <<'PY'
import json, sys
n, secs, kb = int(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3])
r = json.load(open(sys.argv[4]))
lvl = r["levels"][0]
print(f"checker, {sys.argv[5]} ({int(sys.argv[6]) / 2**20:.0f} MiB): {n} transactions in {secs:.2f} s (read and checked): "
      f"{n / secs:,.0f} per second; peak memory {kb / 1024:.0f} MiB, {kb * 1024 / n:.0f} bytes per transaction; "
      f"anomalies: {[a['name'] for a in lvl['anomalies']] or 'none'}")
PY
}
python3 bench/hunt-history.py "$N" >"$tmp/h.jsonl"
checker "lab's JSON lines" "$tmp/h.jsonl"
rm -f "$tmp/h.jsonl"
python3 bench/hunt-history.py "$N" --predicate >"$tmp/h.jsonl"
checker "lab's JSON lines, predicate reads (--workload predicate)" "$tmp/h.jsonl"
rm -f "$tmp/h.jsonl"
python3 bench/hunt-history.py "$N" --register >"$tmp/h.jsonl"
checker "lab's JSON lines, rw-register (--workload rw-register)" "$tmp/h.jsonl"
rm -f "$tmp/h.jsonl"
python3 bench/hunt-history.py "$N" --edn --writes 56 >"$tmp/h.edn"
checker "Jepsen's EDN" "$tmp/h.edn"
rm -f "$tmp/h.edn"
python3 bench/hunt-history.py "$N" --edn --register >"$tmp/h.edn"
checker "Jepsen's EDN, rw-register" "$tmp/h.edn"
rm -f "$tmp/h.edn"

# pgbench: the hunt's table and transaction shape.
PGBENCH=${PGBENCH:-$(dirname "$BIN")/bin/pgbench}
[ -x "$PGBENCH" ] || PGBENCH=$(command -v pgbench || true)
if [ -n "$PGBENCH" ] && [ -x "$PGBENCH" ]; then
    psql_url="$URL"
    "$LAB" hunt --help >/dev/null
    cat >"$tmp/shape.sql" <<'SQL'
\set n random(1, 4)
\set k1 random(1, 4)
\set k2 random(1, 4)
\set k3 random(1, 4)
\set k4 random(1, 4)
\set v random(1, 2000000000)
\set r1 random(0, 1)
\set r2 random(0, 1)
\set r3 random(0, 1)
\set r4 random(0, 1)
BEGIN;
\if :r1
SELECT v FROM append WHERE k = :k1;
\else
INSERT INTO append AS t (k, v) VALUES (:k1, ARRAY[:v::bigint]) ON CONFLICT (k) DO UPDATE SET v = t.v[greatest(1, cardinality(t.v) - 30):] || :v::bigint;
\endif
\if :n >= 2
\if :r2
SELECT v FROM append WHERE k = :k2;
\else
INSERT INTO append AS t (k, v) VALUES (:k2, ARRAY[:v::bigint]) ON CONFLICT (k) DO UPDATE SET v = t.v[greatest(1, cardinality(t.v) - 30):] || :v::bigint;
\endif
\endif
\if :n >= 3
\if :r3
SELECT v FROM append WHERE k = :k3;
\else
INSERT INTO append AS t (k, v) VALUES (:k3, ARRAY[:v::bigint]) ON CONFLICT (k) DO UPDATE SET v = t.v[greatest(1, cardinality(t.v) - 30):] || :v::bigint;
\endif
\endif
\if :n >= 4
\if :r4
SELECT v FROM append WHERE k = :k4;
\else
INSERT INTO append AS t (k, v) VALUES (:k4, ARRAY[:v::bigint]) ON CONFLICT (k) DO UPDATE SET v = t.v[greatest(1, cardinality(t.v) - 30):] || :v::bigint;
\endif
\endif
COMMIT;
SQL
    psql_bin=$(dirname "$PGBENCH")/psql
    [ -x "$psql_bin" ] || psql_bin=psql
    "$psql_bin" "$URL" -qc "DROP TABLE IF EXISTS append; CREATE TABLE append (k bigint PRIMARY KEY, v bigint[] NOT NULL)"
    # As lab's sessions: deadlocks found after 10 ms; a failed transaction
    # (deadlock, serialization) counted and the client going on, as lab records an abort.
    PGOPTIONS="-c deadlock_timeout=10ms" "$PGBENCH" "$URL" -n -c 4 -j 2 -T "$S" -M prepared --max-tries 1 \
        -f "$tmp/shape.sql" >"$tmp/pgbench.out" 2>&1 || true
    done_n=$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' "$tmp/pgbench.out")
    failed_n=$(sed -n 's/^number of failed transactions: \([0-9]*\).*/\1/p' "$tmp/pgbench.out")
    pgb=$(echo "(${done_n:-0} + ${failed_n:-0}) / $S" | bc)
    "$psql_bin" "$URL" -qc "DROP TABLE append"
    "$LAB" hunt --database-url "$URL" --level read-committed --seconds "$S" --no-specs --format json >"$tmp/hunt.json"
    ours=$(python3 -c 'import json,sys; l=json.load(open(sys.argv[1]))["levels"][0]; print(round(l["transactions"]/l["seconds"]))' "$tmp/hunt.json")
    echo "workload (read committed, 4 sessions, ${S} s): lab hunt ${ours} txns/s | pgbench ${pgb} txns/s (${done_n:-?} committed, ${failed_n:-0} failed) | ratio $(echo "scale=2; $ours / $pgb" | bc)"
else
    echo "workload: no pgbench found (PGBENCH=...): skipped"
fi

t0=$(date +%s.%N)
"$LAB" hunt --database-url "$URL" --level serializable --txns "$SER_TXNS" --no-specs --format json >"$tmp/ser.json" || true
t1=$(date +%s.%N)
python3 - "$tmp/ser.json" "$(echo "$t1 - $t0" | bc)" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
l = r["levels"][0]
print(f"serializable: {l['transactions']} transactions ({l['committed']} committed, {l['aborted']} aborted) in {float(sys.argv[2]):.1f} s; "
      f"anomalies: {[a['name'] for a in l['anomalies']] or 'none'}; as documented: {r['as_expected']}")
PY
