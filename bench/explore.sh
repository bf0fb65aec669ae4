#!/usr/bin/env bash
# lab explore against PostgreSQL's isolationtester, on one throwaway cluster
# in one run: PostgreSQL's receipt-report (3 sessions, 210 permutations) and
# two-ids (90), each run RUNS times, alternately, by
#   - isolationtester: every permutation, one after another, at the spec's level;
#   - lab explore --format isolation: the same runs (output compared byte for byte);
#   - lab explore (--level all): every permutation at every level, grouped.
# Both specs begin SERIALIZABLE in every session, so lab runs their levels
# once (it says so). To show four levels as four times the runs, the same
# specs with a plain BEGIN (the level then comes from lab) are run too.
# Prints each figure's median and the ratio to isolationtester's.
# Settings: RUNS (5), JOBS (lab's --jobs; default: its own), LAB_PG_BIN,
# LAB_ISOLATIONTESTER (else found under pg_config --pkglibdir).
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-5}
ISO=${LAB_ISOLATIONTESTER:-$(pg_config --pkglibdir)/pgxs/src/test/isolation/isolationtester}
[ -x "$ISO" ] || { echo "no isolationtester at $ISO (install postgresql-client)"; exit 2; }
. bench/server.sh
start_server lab_bench
JOBS_ARG=()
[ -n "${JOBS:-}" ] && JOBS_ARG=(--jobs "$JOBS")
echo "$(nproc) cores; RUNS=$RUNS"

now() { date +%s.%N; }
median() { sort -n | awk '{a[NR]=$1} END {if (NR % 2) print a[(NR+1)/2]; else print (a[NR/2] + a[NR/2+1]) / 2}'; }
timed() { local t0; t0=$(now); "$@" >/dev/null 2>&1 || true; echo "$(now) - $t0" | bc; }

for spec in receipt-report two-ids; do
    src=tests/pg15-isolation/specs/$spec.spec
    plain="$tmp/$spec-plain.spec"
    sed 's/BEGIN ISOLATION LEVEL SERIALIZABLE,\?/BEGIN/' "$src" >"$plain"
    "$ISO" "$URL" <"$src" >"$tmp/iso.out" 2>&1
    "$LAB" explore "$src" --database-url "$URL" --format isolation "${JOBS_ARG[@]}" >"$tmp/lab.out"
    if cmp -s "$tmp/iso.out" "$tmp/lab.out"; then same=yes; else same=NO; fi
    : >"$tmp/iso.t"; : >"$tmp/labiso.t"; : >"$tmp/all.t"; : >"$tmp/plain.t"
    for _ in $(seq 1 "$RUNS"); do
        timed "$ISO" "$URL" <"$src" >>"$tmp/iso.t"
        timed "$LAB" explore "$src" --database-url "$URL" --format isolation "${JOBS_ARG[@]}" >>"$tmp/labiso.t"
        timed "$LAB" explore "$src" --database-url "$URL" "${JOBS_ARG[@]}" >>"$tmp/all.t"
        timed "$LAB" explore "$plain" --database-url "$URL" "${JOBS_ARG[@]}" >>"$tmp/plain.t"
    done
    iso=$(median <"$tmp/iso.t"); labiso=$(median <"$tmp/labiso.t")
    all=$(median <"$tmp/all.t"); plainall=$(median <"$tmp/plain.t")
    runs=$("$LAB" explore "$plain" --database-url "$URL" --format json "${JOBS_ARG[@]}" 2>"$tmp/err" || cat "$tmp/err" >&2; true) ; runs=$(echo "$runs" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["runs"]))')
    ratio() { echo "scale=2; $1 / $iso" | bc; }
    echo "$spec: isolationtester ${iso}s (its level) | lab explore --format isolation ${labiso}s ($(ratio "$labiso")x, byte-equal: $same) | lab explore --level all ${all}s ($(ratio "$all")x; levels named by the spec: one set of runs) | with a plain BEGIN, --level all ${plainall}s ($(ratio "$plainall")x, $runs runs)"
done
