#!/usr/bin/env bash
# lab spec against PostgreSQL's own harness, on one throwaway cluster in one
# run: PostgreSQL 15's isolation schedule (tests/pg15-isolation) run by
# pg_isolation_regress (isolationtester, one spec after another, as
# PostgreSQL's `make installcheck` does) and by `lab spec --jobs JOBS`,
# alternately, RUNS times each. Prints each run's wall time, the medians and
# their ratio (target: lab at most 0.5 x), and how many specs lab printed
# byte for byte as PostgreSQL's expected files hold and as
# pg_isolation_regress's own run on the same server printed.
# Settings: RUNS (3), JOBS (4), LAB_PG_BIN (the server's binaries),
# LAB_ISOLATIONTESTER (else found under pg_config --pkglibdir), SUITE.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-3}
JOBS=${JOBS:-4}
SUITE=${SUITE:-tests/pg15-isolation}

ISO=${LAB_ISOLATIONTESTER:-$(pg_config --pkglibdir)/pgxs/src/test/isolation/isolationtester}
REGRESS=$(dirname "$ISO")/pg_isolation_regress
[ -x "$REGRESS" ] || { echo "no pg_isolation_regress beside $ISO (install postgresql-client)"; exit 2; }
. bench/server.sh
start_server lab_bench
echo "schedule: $(grep -c '^test:' "$SUITE/isolation_schedule") specs; lab --jobs $JOBS; $(nproc) cores"

now() { date +%s.%N; }
median() { sort -n | awk '{a[NR]=$1} END {if (NR % 2) print a[(NR+1)/2]; else print (a[NR/2] + a[NR/2+1]) / 2}'; }
# "M of N": specs whose output matched their expected file, from lab's JSON.
matched() {
    python3 -c 'import json,sys
d = json.load(open(sys.argv[1]))
s = d["scenarios"]
bad = [x["scenario"] for x in s if not x["variants"][-1]["as_expected"]]
print(len(s) - len(bad), "of", len(s), "(differ: " + (", ".join(bad) or "none") + ")")' "$1"
}
: >"$tmp/iso.times"
: >"$tmp/lab.times"
for run in $(seq 1 "$RUNS"); do
    rm -rf "$tmp/out"
    mkdir -p "$tmp/out"
    t0=$(now)
    "$REGRESS" --inputdir="$SUITE" --outputdir="$tmp/out" --host=127.0.0.1 --port="$PORT" --user=postgres \
        --dbname=isolation_regression --schedule="$SUITE/isolation_schedule" >"$tmp/out/log" 2>&1 || true
    t1=$(now)
    iso=$(printf '%.2f' "$(echo "$t1 - $t0" | bc)")
    passed=$(grep -c ' ok ' "$tmp/out/log" || true)
    t0=$(now)
    "$LAB" spec --database-url "$URL" --schedule "$SUITE/isolation_schedule" --jobs "$JOBS" \
        --expected-dir "$SUITE/expected" --format json >"$tmp/lab.json" || true
    t1=$(now)
    lab=$(printf '%.2f' "$(echo "$t1 - $t0" | bc)")
    same_expected=$(matched "$tmp/lab.json")
    "$LAB" spec --database-url "$URL" --schedule "$SUITE/isolation_schedule" --jobs "$JOBS" \
        --expected-dir "$tmp/out/results" --format json >"$tmp/lab2.json" || true
    same_iso=$(matched "$tmp/lab2.json")
    echo "run $run: pg_isolation_regress ${iso} s ($passed ok); lab spec ${lab} s;" \
        "lab byte-equal: $same_expected with the expected files, $same_iso with pg_isolation_regress's output"
    echo "$iso" >>"$tmp/iso.times"
    echo "$lab" >>"$tmp/lab.times"
done
iso=$(median <"$tmp/iso.times")
lab=$(median <"$tmp/lab.times")
echo "median wall time: pg_isolation_regress $iso s, lab spec $lab s, ratio $(echo "scale=2; $lab / $iso" | bc) (target <= 0.5)"
