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
json=$(target/release/lab invoice-numbering --variant jit-reservation --variant lock-over-call \
    --workers "$WORKERS" --latency-ms "$LATENCY_MS" --invoices "$INVOICES" --transient-rate 0 \
    --wait-timeout 120 --format json) || [ $? -eq 1 ]
python3 - "$WORKERS" "$LATENCY_MS" <<PY
import json, sys
w, lat = int(sys.argv[1]), int(sys.argv[2]) / 1000
r = json.loads('''$json''')
rate = {v["name"]: v["metrics"]["invoices_per_s"] for v in r["variants"]}
jit, loc = rate["jit-reservation"], rate["lock-over-call"]
print(f"PostgreSQL {r['server_version']}, {w} workers, integrator latency {lat*1000:.0f} ms (mean)")
print(f"jit-reservation: {jit:.1f} invoices/s; target >= 0.9 x {w}/{lat:.3f} = {0.9*w/lat:.1f}  ({jit/(w/lat):.2f} of {w/lat:.0f})")
print(f"lock-over-call:  {loc:.1f} invoices/s; about 1/{lat:.3f} = {1/lat:.1f}  ({loc*lat:.2f} of it)")
print(f"ratio jit / lock-over-call: {jit/loc:.1f}")
PY
