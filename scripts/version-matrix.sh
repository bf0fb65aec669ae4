#!/usr/bin/env bash
# Every PostgreSQL from 12 to 18 side by side: `lab all` and `lab phenomena`
# on each (a throwaway server from scripts/fetch-pg.sh), then `lab compare`
# over the runs: a row per variant (per phenomenon and level), a column per
# version, and what differs where.
#
#   scripts/version-matrix.sh                 # 12 13 14 15 16 17 18
#   scripts/version-matrix.sh 12 18           # some versions
#   scripts/version-matrix.sh /usr/lib/postgresql/15/bin 18   # a bin dir of your own too
#   OUT=/tmp/matrix scripts/version-matrix.sh # keep the JSON and the tables there
#   SAVE=tests/versions scripts/version-matrix.sh   # and the runs docs/CI.md's
#       version table and the baseline test are made from (needs jq), then
#       LAB_BLESS=1 cargo test contract rewrites the table
#
# It exits 1 when lab says a server is not as documented (a run exits 1),
# 2 when a run could not run; the tables are written either way:
# $OUT/all.md and $OUT/phenomena.md (Markdown, for docs/CI.md's version
# table), $OUT/all.txt and $OUT/phenomena.txt.
set -uo pipefail
cd "$(dirname "$0")/.."
versions=("$@")
[ ${#versions[@]} -gt 0 ] || versions=(12 13 14 15 16 17 18)
OUT=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/lab-version-matrix.XXXXXX")}
mkdir -p "$OUT"
LAB=${LAB:-target/release/lab}
[ -x "$LAB" ] || cargo build --release --quiet || exit 2

worst=0
note() { [ "$1" -gt "$worst" ] && worst=$1; }
all=()
phen=()
for v in "${versions[@]}"; do
    if [ -d "$v" ]; then bin=$v; else bin=$(scripts/fetch-pg.sh "$v") || exit 2; fi
    for cmd in all phenomena; do
        json="$OUT/$cmd-$v.json"
        start=$(date +%s)
        LAB_PG_BIN=$bin "$LAB" "$cmd" --format json >"$json" 2>"$OUT/$cmd-$v.err"
        rc=$?
        echo "version-matrix: PostgreSQL $v: lab $cmd exit $rc ($(( $(date +%s) - start )) s)" >&2
        if [ $rc -ne 0 ]; then
            note $rc
            tail -3 "$OUT/$cmd-$v.err" >&2
        fi
        [ -s "$json" ] || continue
        if [ "$cmd" = all ]; then all+=("$json"); else phen+=("$json"); fi
    done
done

# What `lab compare` and `--baseline` read of a run, nothing else (the
# timelines' waits, not their statements): small enough to keep in the repository.
if [ -n "${SAVE:-}" ]; then
    command -v jq >/dev/null || { echo "version-matrix: SAVE needs jq" >&2; exit 2; }
    mkdir -p "$SAVE"
    waits='[.timeline[]? | select((.blocked_by // []) | length > 0) | {session, step, blocked_by}]'
    for json in "${all[@]}"; do
        v=$(jq -r .server_version "$json")
        jq --indent 1 "{server_version, as_expected, scenarios: [.scenarios[] | {scenario, variants: [.variants[] |
            {name, as_expected, anomaly, skipped, skip_reason, sqlstates, metrics, timeline: $waits}]}]}" \
            "$json" >"$SAVE/all-$v.json"
    done
    for json in "${phen[@]}"; do
        v=$(jq -r .server_version "$json")
        jq --indent 1 "{server_version, levels, phenomena: [.phenomena[] | {id, name, cells: (.cells | map_values(
            {verdict, how, sqlstate, as_expected, timeline: $waits}))}]}" "$json" >"$SAVE/phenomena-$v.json"
    done
    echo "version-matrix: the runs, as compared, in $SAVE" >&2
fi

for kind in all phenomena; do
    if [ "$kind" = all ]; then files=("${all[@]}"); else files=("${phen[@]}"); fi
    [ ${#files[@]} -ge 2 ] || continue
    "$LAB" compare "${files[@]}" --format markdown >"$OUT/$kind.md" 2>/dev/null
    NO_COLOR=1 "$LAB" compare "${files[@]}" --differences >"$OUT/$kind.txt"
    echo "== lab $kind: the variants that differ between versions ($OUT/$kind.md has every row)"
    cat "$OUT/$kind.txt"
done
echo "version-matrix: JSON and tables in $OUT" >&2
exit $worst
