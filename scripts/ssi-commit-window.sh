#!/usr/bin/env bash
# Replays, one statement at a time, the shape of the SERIALIZABLE G2-items
# `lab hunt` found (docs/HUNT.md), twice on a throwaway
# cluster: once as it is, once with the first committer (O) held by gdb at
# the entry of ReleasePredicateLocks, i.e. after its COMMIT made it visible
# (ProcArrayEndTransaction) and before the serializable bookkeeping marks
# it committed. Nothing sleeps: every step waits for its session's answer,
# and the held COMMIT for gdb's report of the breakpoint, each within a
# deadline.
#
#   scripts/ssi-commit-window.sh                      # the machine's PostgreSQL 15
#   scripts/ssi-commit-window.sh "$(scripts/fetch-pg.sh 18)"
#
# Needs root (gdb attaches to a backend run by the postgres user) and gdb;
# the server's ReleasePredicateLocks is an exported symbol, so no debug
# symbols are needed.
#
# The transactions (table t, keys 1 to 3, each a list), in this order:
#   P: BEGIN; read key 1; append 20 to key 2
#   O: BEGIN; append 10 to key 1; COMMIT
#   I: BEGIN; read key 1 (sees O's 10)
#   P: COMMIT
#   I: read key 2 (without P's 20, committed after I's snapshot);
#      append 30 to key 3; COMMIT
# I →rw P →rw O, and O →wr I: a cycle no serial order has (G2-item). The
# script prints who committed and exits 0 when each run ends as SSI
# documents (one of them aborts with 40001), 1 when a run lets all three
# commit, 2 when it cannot run.
set -euo pipefail

bin=${1:-/usr/lib/postgresql/15/bin}
deadline=20
command -v gdb >/dev/null || { echo "ssi-commit-window: gdb is needed" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "ssi-commit-window: run as root (gdb attaches to the server's backend)" >&2; exit 2; }
[ -x "$bin/postgres" ] || { echo "ssi-commit-window: no postgres in $bin" >&2; exit 2; }
psql=$bin/psql
[ -x "$psql" ] || psql=$(command -v psql)

work=$(mktemp -d /tmp/lab-ssi-window.XXXXXX)
chown postgres "$work"
port=$((20000 + RANDOM % 20000))
cleanup() {
    jobs -p | xargs -r kill 2>/dev/null || true
    su postgres -c "'$bin/pg_ctl' -D '$work/data' -m immediate stop" >/dev/null 2>&1 || true
    rm -rf "$work"
}
trap cleanup EXIT

su postgres -c "'$bin/initdb' -D '$work/data' -A trust -U postgres" >/dev/null
su postgres -c "'$bin/pg_ctl' -D '$work/data' -l '$work/log' -w -o '-p $port -k $work -c listen_addresses=' start" >/dev/null
url="postgresql://postgres@/postgres?host=$work&port=$port"
version=$("$psql" -X -At "$url" -c "SHOW server_version")

# A session: psql reading a FIFO, every answer followed by a marker line.
declare -A fd
open() {
    mkfifo "$work/$1.in"
    "$psql" -X -q -At "$url" <"$work/$1.in" >>"$work/$1.out" 2>&1 &
    exec {f}>"$work/$1.in"
    fd[$1]=$f
    send "$1" "SET application_name = '$1'"
}
n=0
# send SESSION SQL: one statement, returns when its answer came (or fails at the deadline).
send() {
    n=$((n + 1))
    printf '%s;\n\\echo @@%s\n' "$2" "$n" >&"${fd[$1]}"
    wait_for "$work/$1.out" "@@$n" "$1: $2"
}
# post SESSION SQL: sent, not waited for.
post() {
    n=$((n + 1))
    printf '%s;\n\\echo @@%s\n' "$2" "$n" >&"${fd[$1]}"
    posted=$n
}
wait_for() {
    local end=$((SECONDS + deadline))
    until grep -qF -- "$2" "$1" 2>/dev/null; do
        if [ $SECONDS -ge $end ]; then
            echo "ssi-commit-window: no answer in ${deadline} s to $3" >&2
            exit 2
        fi
        sleep 0.05 # polling the answer file, not timing the sessions
    done
}
answers() { grep -v '^@@' "$work/$1.out" | tr '\n' ' '; }

run() {
    local hold=$1
    "$psql" -X -q "$url" -c "DROP TABLE IF EXISTS t; CREATE TABLE t (k int PRIMARY KEY, v int[]); INSERT INTO t VALUES (1, '{}'), (2, '{}'), (3, '{}')"
    for s in P O I; do
        [ -e "$work/$s.in" ] || open "$s"
        : >"$work/$s.out"
    done
    send P "BEGIN ISOLATION LEVEL SERIALIZABLE"
    send P "SELECT v FROM t WHERE k = 1"
    send P "UPDATE t SET v = v || 20 WHERE k = 2"
    send O "BEGIN ISOLATION LEVEL SERIALIZABLE"
    send O "UPDATE t SET v = v || 10 WHERE k = 1"
    if [ "$hold" = yes ]; then
        local pid
        pid=$("$psql" -X -At "$url" -c "SELECT pid FROM pg_stat_activity WHERE application_name = 'O'")
        mkfifo "$work/gdb.in"
        gdb -q -nx -p "$pid" <"$work/gdb.in" >"$work/gdb.out" 2>&1 &
        local debugger=$!
        exec {g}>"$work/gdb.in"
        printf 'handle SIGUSR1 SIGUSR2 SIGINT SIGTERM SIGQUIT nostop noprint pass\nbreak ReleasePredicateLocks\necho @@armed\\n\ncontinue\n' >&$g
        wait_for "$work/gdb.out" "@@armed" "gdb attaching to $pid"
        post O "COMMIT"
        wait_for "$work/gdb.out" "Breakpoint 1," "O's COMMIT reaching ReleasePredicateLocks"
    else
        send O "COMMIT"
    fi
    send I "BEGIN ISOLATION LEVEL SERIALIZABLE"
    send I "SELECT v FROM t WHERE k = 1"
    send P "COMMIT"
    if [ "$hold" = yes ]; then
        printf 'delete\ndetach\nquit\n' >&$g
        wait_for "$work/O.out" "@@$posted" "O's COMMIT after gdb let it go"
        exec {g}>&-
        wait "$debugger" || true
        rm -f "$work/gdb.in"
    fi
    send I "SELECT v FROM t WHERE k = 2"
    send I "UPDATE t SET v = v || 30 WHERE k = 3"
    send I "COMMIT"
    echo "  P: $(answers P)"
    echo "  O: $(answers O)"
    echo "  I: $(answers I)"
    echo "  after: $("$psql" -X -At "$url" -c "SELECT string_agg(k || '=' || v::text, ' ' ORDER BY k) FROM t")"
    local aborted
    aborted=$(cat "$work/P.out" "$work/I.out" | grep -c "could not serialize" || true)
    if [ "$aborted" -gt 0 ]; then
        echo "  as documented: a transaction of the cycle aborted (40001)"
        return 0
    fi
    echo "  NOT as documented: P, O and I all committed (I saw O's 10 and not P's 20; P did not see O's 10)"
    return 1
}

echo "PostgreSQL $version, SERIALIZABLE"
status=0
echo "1. O's COMMIT runs through:"
run no || status=1
echo "2. O's COMMIT held at ReleasePredicateLocks (visible, not yet committed for SSI) while I reads key 1 and P commits:"
run yes || status=1
exit $status
