#!/usr/bin/env bash
# lab failover on lab's own HA cluster (Patroni, etcd, three nodes), every
# variant: the cluster's start to healthy (etcd up to three nodes
# streaming), each variant's failover (lab's failure to the promotion
# Patroni made, as lab saw it), the window a client saw (last acknowledged
# write before to first after), the rows lost, and the run's wall time.
# Printed, never asserted. Targets: healthy within 20 s; a failover after a
# node stops within ttl + loop_wait + 5 s (26 s: zombie-primary, whose node
# is frozen, waits for the leader key to expire); the whole run within 5
# minutes on 2 cores.
#   bench/failover.sh [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-1}
cargo build --release -q
python3 - "$RUNS" <<'PY'
import json, statistics, subprocess, sys, time
runs = int(sys.argv[1])
walls, starts = [], []
per = {}
for n in range(runs):
    t = time.perf_counter()
    out = subprocess.run(["target/release/lab", "failover", "--format", "json"],
                         stdout=subprocess.PIPE, check=False).stdout
    walls.append(time.perf_counter() - t)
    report = json.loads(out)
    for v in report["variants"]:
        m = v["metrics"]
        if "cluster_start_ms" in m:
            starts.append(m["cluster_start_ms"] / 1000)
        row = per.setdefault(v["name"], [])
        row.append((v["as_expected"], m.get("failover_ms"), m.get("unavailable_ms"),
                    m.get("lost", m.get("payments", m.get("unprotected")))))
print(f"{'variant':22} {'verdicts':>9} {'failover s':>11} {'unavailable s':>14} {'lost (or paid, unprotected)':>28}")
for name, rows in per.items():
    ok = sum(1 for r in rows if r[0])
    fo = [r[1] / 1000 for r in rows if r[1] is not None]
    un = [r[2] / 1000 for r in rows if r[2] is not None]
    lost = [r[3] for r in rows if r[3] is not None]
    fmt = lambda xs: f"{statistics.median(xs):.1f}" if xs else "-"
    print(f"{name:22} {ok:>4}/{len(rows):<4} {fmt(fo):>11} {fmt(un):>14} {('-' if not lost else ','.join(str(x) for x in sorted(set(lost)))):>28}")
print(f"cluster start to healthy: median {statistics.median(starts):.1f} s (min {min(starts):.1f}, max {max(starts):.1f})")
print(f"lab failover, every variant: median {statistics.median(walls):.1f} s of {runs} run(s) (min {min(walls):.1f}, max {max(walls):.1f})")
PY
