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
# Prints each figure's median and the ratio to isolationtester's, and the
# server's CPU for it (its backends' and background processes' user and
# system time, from /proc): four times the runs cost the server four times
# the CPU, and that divided by the cores is as fast as any client can go.
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
# The postmaster's pid, and the CPU seconds the server has used so far: its
# own, its ended backends' (reaped into its cutime and cstime) and its live
# children's.
PM=$(psql "$URL" -Atc 'SHOW data_directory' | xargs -I{} head -1 {}/postmaster.pid)
HZ=$(getconf CLK_TCK)
[ -r "/proc/$PM/task/$PM/children" ] || { echo "no /proc/$PM/task/$PM/children here: the server's CPU cannot be read"; exit 2; }
server_cpu() {
    local ticks
    ticks=$( (cat "/proc/$PM/stat"; for c in $(cat "/proc/$PM/task/$PM/children"); do cat "/proc/$c/stat" 2>/dev/null; done) |
        awk '{sub(/^.*\) /, ""); t += $12 + $13; if (NR == 1) t += $14 + $15} END {print t}')
    echo "scale=3; $ticks / $HZ" | bc
}
# The postmaster's client backends (their titles name the client's address).
client_backends() {
    local c
    for c in $(cat "/proc/$PM/task/$PM/children"); do
        if tr '\0' ' ' 2>/dev/null <"/proc/$c/cmdline" | grep -qE '\([0-9]+\)|\[local\]'; then echo "$c"; fi
    done
}
# Waits until the server has no client backend but lab server's own (those
# of a run that just ended go a moment after it: their time counts once the
# postmaster has reaped them). Asked of /proc: a connection to ask the server
# would cost it CPU of its own.
others_gone() {
    local _
    for _ in $(seq 1 100); do
        [ -z "$(client_backends | grep -vxF -f <(echo "$KEPT"))" ] && return
        sleep 0.01
    done
    echo "warning: client backends still there after 1 s: $(client_backends | tr '\n' ' ')" >&2
}
# lab server's own backends (the asking psql's aside).
KEPT=$(psql "$URL" -Atc "SELECT pid FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid() ORDER BY pid")
# Runs the command; appends its wall time to $1 and the server's CPU for it to $1.cpu.
timed() {
    local out=$1 t0 c0
    shift
    others_gone
    c0=$(server_cpu); t0=$(now)
    "$@" >/dev/null 2>&1 || true
    echo "$(now) - $t0" | bc >>"$out"
    others_gone
    echo "$(server_cpu) - $c0" | bc >>"$out.cpu"
}

for spec in receipt-report two-ids; do
    src=tests/pg15-isolation/specs/$spec.spec
    plain="$tmp/$spec-plain.spec"
    sed 's/BEGIN ISOLATION LEVEL SERIALIZABLE,\?/BEGIN/' "$src" >"$plain"
    "$ISO" "$URL" <"$src" >"$tmp/iso.out" 2>&1
    "$LAB" explore "$src" --database-url "$URL" --format isolation "${JOBS_ARG[@]}" >"$tmp/lab.out"
    if cmp -s "$tmp/iso.out" "$tmp/lab.out"; then same=yes; else same=NO; fi
    for f in iso labiso all plain; do : >"$tmp/$f.t"; : >"$tmp/$f.t.cpu"; done
    for _ in $(seq 1 "$RUNS"); do
        timed "$tmp/iso.t" "$ISO" "$URL" <"$src"
        timed "$tmp/labiso.t" "$LAB" explore "$src" --database-url "$URL" --format isolation "${JOBS_ARG[@]}"
        timed "$tmp/all.t" "$LAB" explore "$src" --database-url "$URL" "${JOBS_ARG[@]}"
        timed "$tmp/plain.t" "$LAB" explore "$plain" --database-url "$URL" "${JOBS_ARG[@]}"
    done
    iso=$(median <"$tmp/iso.t"); labiso=$(median <"$tmp/labiso.t")
    all=$(median <"$tmp/all.t"); plainall=$(median <"$tmp/plain.t")
    cpu() { median <"$tmp/$1.t.cpu"; }
    runs=$("$LAB" explore "$plain" --database-url "$URL" --format json "${JOBS_ARG[@]}" 2>"$tmp/err" || cat "$tmp/err" >&2; true) ; runs=$(echo "$runs" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["runs"]))')
    ratio() { echo "scale=2; $1 / $iso" | bc; }
    echo "$spec: isolationtester ${iso}s (its level) | lab explore --format isolation ${labiso}s ($(ratio "$labiso")x, byte-equal: $same) | lab explore --level all ${all}s ($(ratio "$all")x; levels named by the spec: one set of runs) | with a plain BEGIN, --level all ${plainall}s ($(ratio "$plainall")x, $runs runs)"
    floor=$(echo "scale=3; $(cpu plain) / $(nproc)" | bc)
    echo "  the server's CPU: isolationtester $(cpu iso)s | --format isolation $(cpu labiso)s | --level all $(cpu all)s | plain BEGIN $(cpu plain)s, on $(nproc) cores no less than ${floor}s ($(ratio "$floor")x)"
done
