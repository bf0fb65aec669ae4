#!/usr/bin/env bash
# lab all side by side (the default, --jobs 4) against one by one (--jobs 1),
# on one throwaway server, RUNS times each, interleaved. Prints each run's wall
# time, the medians, and the longest single scenario (its inherent waits: the
# floor any schedule has) with the ratio the issue's target is stated in.
#   bench/all.sh [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-3}
. bench/server.sh
start_server lab_bench_all

median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
for i in $(seq 1 "$RUNS"); do
    for jobs in 1 4; do
        "$LAB" all --jobs "$jobs" --format json --database-url "$URL" >"$tmp/all-$jobs-$i.json"
        python3 - "$tmp/all-$jobs-$i.json" "$jobs" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
longest = max(d["scenarios"], key=lambda s: s["elapsed_ms"])
print(f"jobs {sys.argv[2]}: {d['elapsed_ms']/1000:.2f} s, as documented: {d['as_expected']}, "
      f"longest scenario {longest['scenario']} {longest['elapsed_ms']/1000:.2f} s")
PY
    done
done
for jobs in 1 4; do
    m=$(for f in "$tmp"/all-$jobs-*.json; do python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['elapsed_ms'])" "$f"; done | median)
    echo "median jobs $jobs: $(awk -v m="$m" 'BEGIN {printf "%.2f s", m/1000}')"
done
