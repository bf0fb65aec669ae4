#!/usr/bin/env bash
# Soak: runs `lab all` RUNS times (50) in a row while every core is kept busy by
# a CPU load, and counts verdict flips and timeline-order changes against the
# first run. The timeline order of a variant is its sequence of
# (session, result, statement verb), notes aside (they narrate concurrent
# workers whose order is not part of any interleaving). The worker-pool
# scenarios (queue, stock-race, invoice-numbering) are compared by verdict
# only: which worker takes which job is the point of those, not a fixed order.
#   RUNS=50 scripts/soak.sh [extra lab all options]
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-50}
cargo build --release -q
out=$(mktemp -d)
burners=()
cleanup() {
    for p in "${burners[@]}"; do kill "$p" 2>/dev/null || true; done
    rm -rf "$out"
}
trap cleanup EXIT
for _ in $(seq 1 "$(nproc)"); do
    (while :; do :; done) &
    burners+=($!)
done
echo "soak: $RUNS runs of lab all with $(nproc) CPU burners" >&2
for i in $(seq 1 "$RUNS"); do
    code=0
    target/release/lab all --format json --timeout-ms 300 "$@" >"$out/$i.json" 2>"$out/$i.err" || code=$?
    echo "run $i: exit $code" >&2
    if [ "$code" -ge 2 ]; then cat "$out/$i.err" >&2; fi
done
python3 - "$out" "$RUNS" <<'PY'
import json, os, sys
out, runs = sys.argv[1], int(sys.argv[2])
def load(i):
    p = os.path.join(out, f"{i}.json")
    try:
        return json.load(open(p))
    except Exception:
        return None
POOLS = {"queue", "stock-race", "invoice-numbering"}
def shape(r):
    verdicts, orders = {}, {}
    for s in r["scenarios"]:
        for v in s["variants"]:
            k = f'{s["scenario"]}/{v["name"]}'
            verdicts[k] = "skipped" if v.get("skipped") else v["as_expected"]
            if s["scenario"] in POOLS:
                continue
            orders[k] = [(e["session"], e["result"], (e["sql"].split() or [""])[0]) for e in v["timeline"] if e["result"] != "note"]
    return verdicts, orders
base = None
flips, order_changes, failed_runs = {}, {}, 0
for i in range(1, runs + 1):
    r = load(i)
    if r is None:
        failed_runs += 1
        continue
    v, o = shape(r)
    if base is None:
        base = (v, o)
        continue
    for k in v:
        if v[k] != base[0].get(k):
            flips[k] = flips.get(k, 0) + 1
        if k in o and o[k] != base[1].get(k):
            order_changes[k] = order_changes.get(k, 0) + 1
print(f"runs: {runs}, runs without a report (exit 2): {failed_runs}")
print(f"verdict flips: {sum(flips.values())} {flips if flips else ''}")
print(f"timeline-order changes: {sum(order_changes.values())} {order_changes if order_changes else ''}")
PY
