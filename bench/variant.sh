#!/usr/bin/env bash
# One variant on the throwaway server, as a newcomer runs it
# (`lab lost-update --variant read-committed`): RUNS wall times, start to
# exit (the server's copy, start and stop included), and their median.
#   bench/variant.sh [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-11}
cargo build --release -q
# The first run may make the initdb template: not counted.
target/release/lab lost-update --variant read-committed --format json >/dev/null
python3 - "$RUNS" <<'PY'
import statistics, subprocess, sys, time
runs = int(sys.argv[1])
walls = []
for _ in range(runs):
    t = time.perf_counter()
    subprocess.run(["target/release/lab", "lost-update", "--variant", "read-committed", "--format", "json"],
                   stdout=subprocess.DEVNULL, check=True)
    walls.append(time.perf_counter() - t)
print(" ".join(f"{w:.3f}" for w in walls))
print(f"median of {runs}: {statistics.median(walls):.3f} s (min {min(walls):.3f}, max {max(walls):.3f})")
PY
