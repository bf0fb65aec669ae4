#!/usr/bin/env bash
# Invoice numbering throughput: jit-reservation against lock-over-call with the
# same workers and integrator latency, on a throwaway cluster. Prints both
# rates, the targets (jit >= 0.9 x workers / latency; lock-over-call about
# 1 / latency) and their ratio.
#   WORKERS=4 LATENCY_MS=50 INVOICES=200 bench/invoice.sh
set -euo pipefail
cd "$(dirname "$0")/.."
WORKERS=${WORKERS:-4}
LATENCY_MS=${LATENCY_MS:-50}
INVOICES=${INVOICES:-200}
cargo build --release -q
out=$(mktemp)
trap 'rm -f "$out"' EXIT
target/release/lab invoice-numbering --variant jit-reservation --variant lock-over-call \
    --workers "$WORKERS" --latency-ms "$LATENCY_MS" --invoices "$INVOICES" --transient-rate 0 \
    --wait-timeout 120 --format json >"$out" || [ $? -eq 1 ]
python3 - "$WORKERS" "$LATENCY_MS" "$out" <<'PY'
import json, sys
w, lat = int(sys.argv[1]), int(sys.argv[2]) / 1000
r = json.load(open(sys.argv[3]))
m = {v["name"]: v["metrics"] for v in r["variants"]}
jit, loc = m["jit-reservation"], m["lock-over-call"]
print(f"PostgreSQL {r['server_version']}, {w} workers, integrator latency {lat*1000:.0f} ms (mean of 0.5-1.5x)")
print("sends/s counts every integrator call (a rejected invoice is sent again after its correction);")
print("invoices/s counts numbers issued (cancelled invoices are never sent)")
for name, v, target in (("jit-reservation", jit, w / lat), ("lock-over-call", loc, 1 / lat)):
    print(f"{name:16} {v['sends_per_s']:6.1f} sends/s = {v['sends_per_s']/target:.2f} x {target:.0f} (target {'>= 0.9' if name.startswith('jit') else 'about 1'});"
          f" {v['invoices_per_s']:6.1f} invoices/s; counter lock p50 {v['counter_lock_hold_ms_p50']} ms")
print(f"ratio jit / lock-over-call: {jit['sends_per_s'] / loc['sends_per_s']:.1f} (workers: {w})")
PY
