#!/usr/bin/env bash
# How soon `lab hunt` meets what it hunts, printed (never asserted):
#   - the commit-window G2-item at SERIALIZABLE under `--nemesis pause`
#     (docs/findings/ssi-commit-window.md): a forbidden G2-item, G-single or
#     G-nonadjacent at serializable;
#   - Long Fork through lab's standby: `--replica --level repeatable-read`,
#     a forbidden G-nonadjacent at repeatable read.
# Each is RUNS runs (seeds 1..RUNS) of LIMIT seconds on lab's own throwaway
# server (LAB_PG_BIN: another PostgreSQL). A run's time to find is the end
# of the last transaction of the first forbidden anomaly it reports (from
# its history: the run had met it by then); a run that found nothing within
# LIMIT counts as more than LIMIT. The median is within LIMIT exactly when
# more than half the runs found it.
#   - Long Fork through a synchronous standby: `--replica --sync-replica
#     remote-apply --nemesis pause` (a commit waiting for the standby is
#     visible there first; a pause there holds that open);
#   - the nemesis's cost when idle: the workload's throughput with each
#     nemesis given but never due (--nemesis-interval 600000) against none,
#     RUNS runs of IDLE seconds each, interleaved (the issue's bound: at most
#     20% fewer transactions per second).
# Settings: RUNS (5), LIMIT (60), IDLE (15), WHICH (pause,replica,replica-sync,idle).
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-5}
LIMIT=${LIMIT:-60}
IDLE=${IDLE:-15}
WHICH=${WHICH:-pause,replica,replica-sync,idle}
cargo build --release -q
LAB=target/release/lab
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "$(nproc) cores, PostgreSQL from ${LAB_PG_BIN:-the machine}"

hunt() { # NAME LEVEL ARGS...
    name=$1 level=$2
    shift 2
    for seed in $(seq 1 "$RUNS"); do
        "$LAB" hunt --level "$level" --seed "$seed" --seconds "$LIMIT" --no-specs \
            --history "$tmp/$name-$seed.jsonl" --format json "$@" >"$tmp/$name-$seed.json" 2>"$tmp/$name-$seed.err" || true
    done
    python3 - "$tmp" "$name" "$RUNS" "$LIMIT" <<'PY'
import json, statistics, sys
tmp, name, runs, limit = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
found = []
for seed in range(1, runs + 1):
    try:
        report = json.load(open(f"{tmp}/{name}-{seed}.json"))
    except (OSError, ValueError):
        print(f"  seed {seed}: no report ({open(f'{tmp}/{name}-{seed}.err').read().strip()[-200:]})")
        found.append(float("inf"))
        continue
    level = report["levels"][0]
    ends = {}
    for line in open(f"{tmp}/{name}-{seed}.jsonl"):
        t = json.loads(line)
        if "index" in t:
            ends[t["index"]] = t.get("end") or t["start"]
    forbidden = [a for a in level["anomalies"] if a["forbidden"]]
    if forbidden:
        at = min(max(ends[t] for t in a["transactions"]) / 1e9 for a in forbidden)
        names = sorted({a["name"] for a in forbidden})
        print(f"  seed {seed}: {', '.join(names)} by {at:.1f} s ({level['transactions']} transactions, {level['seconds']:.0f} s)")
    else:
        at = float("inf")
        print(f"  seed {seed}: nothing forbidden within {limit:.0f} s ({level['transactions']} transactions)")
    found.append(at)
median = statistics.median(found)
shown = f"{median:.1f} s" if median != float("inf") else f"over {limit:.0f} s"
hits = sum(1 for f in found if f != float("inf"))
print(f"{name}: found in {hits} of {runs} runs; median time to find {shown}")
PY
}

case ",$WHICH," in *,pause,*)
    echo "the commit-window G2-item: lab hunt --level serializable --nemesis pause, $RUNS runs of $LIMIT s"
    hunt pause serializable --nemesis pause
esac
case ",$WHICH," in *,replica,*)
    echo "Long Fork: lab hunt --replica --level repeatable-read, $RUNS runs of $LIMIT s"
    hunt replica repeatable-read --replica
esac
case ",$WHICH," in *,replica-sync,*)
    echo "Long Fork: lab hunt --replica --sync-replica remote-apply --nemesis pause --level repeatable-read, $RUNS runs of $LIMIT s"
    hunt replica-sync repeatable-read --replica --sync-replica remote-apply --nemesis pause
esac
case ",$WHICH," in *,idle,*)
    echo "the nemesis idle: lab hunt --level serializable, $RUNS runs of $IDLE s each, without and with a nemesis never due"
    for seed in $(seq 1 "$RUNS"); do
        for nemesis in none pause kill restart partition; do
            args=()
            [ "$nemesis" = none ] || args=(--nemesis "$nemesis" --nemesis-interval 600000)
            "$LAB" hunt --level serializable --seed "$seed" --seconds "$IDLE" --no-specs --format json "${args[@]}" \
                >"$tmp/idle-$nemesis-$seed.json" 2>"$tmp/idle-$nemesis-$seed.err" || true
        done
    done
    python3 - "$tmp" "$RUNS" <<'PY'
import json, statistics, sys
tmp, runs = sys.argv[1], int(sys.argv[2])
rates = {}
for nemesis in ["none", "pause", "kill", "restart", "partition"]:
    rates[nemesis] = {}
    for seed in range(1, runs + 1):
        try:
            level = json.load(open(f"{tmp}/idle-{nemesis}-{seed}.json"))["levels"][0]
            rates[nemesis][seed] = level["transactions"] / level["seconds"]
        except (OSError, ValueError, KeyError):
            print(f"  {nemesis} seed {seed}: no report ({open(f'{tmp}/idle-{nemesis}-{seed}.err').read().strip()[-200:]})")
base = statistics.median(rates["none"].values())
print(f"  no nemesis: median {base:.0f} transactions/s ({', '.join(f'{r:.0f}' for r in rates['none'].values())})")
# A seed is a workload: each run is held to the run of its seed without a
# nemesis (run just before it), and the cost is the median of those. kill
# and restart run the server durable (fsync, synchronous_commit on), as
# they always do: their figure holds that cost too.
for nemesis in ["pause", "kill", "restart", "partition"]:
    seeds = [s for s in rates[nemesis] if s in rates["none"]]
    if not seeds:
        continue
    m = statistics.median(rates[nemesis].values())
    cost = statistics.median(1 - rates[nemesis][s] / rates["none"][s] for s in seeds)
    rates[nemesis] = list(rates[nemesis].values())
    print(f"  --nemesis {nemesis}, idle: median {m:.0f} transactions/s ({', '.join(f'{r:.0f}' for r in rates[nemesis])}), cost {100 * cost:.1f}% (median by seed; bound 20%)")
PY
esac
