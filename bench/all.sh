#!/usr/bin/env bash
# lab all side by side (the default, --jobs 4) against one by one (--jobs 1),
# on one throwaway server, RUNS times each, interleaved. Prints each run's wall
# time, the medians, and the longest single scenario (its inherent waits: the
# floor any schedule has) with the ratio the issue's target is stated in;
# then lab all on its own throwaway server, RUNS times.
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
    declare "median_$jobs=$m"
done
# The target: side by side within 1.15 times the longest scenario run alone
# (one by one, nothing beside it: its inherent waits).
longest=$(for f in "$tmp"/all-1-*.json; do python3 -c "import json,sys; print(max(s['elapsed_ms'] for s in json.load(open(sys.argv[1]))['scenarios']))" "$f"; done | median)
awk -v m="$median_4" -v l="$longest" 'BEGIN {printf "longest scenario alone (median): %.2f s; side by side / longest: %.2f (target 1.15)\n", l/1000, m/l}'
# On lab's own throwaway server, as a newcomer runs it: replica's standbys
# too (its own database), and the server's start and stop.
for i in $(seq 1 "$RUNS"); do
    "$LAB" all --format json >"$tmp/throwaway-$i.json"
    python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(f\"throwaway server: {d['elapsed_ms']/1000:.2f} s, as documented: {d['as_expected']}\")" "$tmp/throwaway-$i.json"
done
m=$(for f in "$tmp"/throwaway-*.json; do python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['elapsed_ms'])" "$f"; done | median)
awk -v m="$m" 'BEGIN {printf "median on the throwaway server: %.2f s\n", m/1000}'
