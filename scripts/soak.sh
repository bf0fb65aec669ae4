#!/usr/bin/env bash
# Soak: runs `lab all` RUNS times (50) while every core is kept busy by a CPU
# load and reports every exit code, verdict flips (with the checks that
# failed) against the first run that exited 0, and timeline-order changes
# against each variant's usual order (a run that differs only in a wait seen
# or not is listed apart, and does not fail the soak). The timeline order of
# a variant is its sequence of (session, result, statement verb), notes aside
# (they narrate concurrent workers whose order is not part of any
# interleaving), and answers that reached lab within a millisecond of each
# other taken as a set.
# The worker-pool scenarios (queue, stock-race, invoice-numbering) are
# compared by verdict only: which worker takes which job is the point of
# those, not a fixed order.
#
#   RUNS=50 scripts/soak.sh [--concurrent K] [--shared] [--keep DIR] [lab all options]
#
#   --concurrent K  K runs at once, each on a throwaway server of its own
#   --shared        ... or all K side by side on one server (lab server),
#                   each in a schema of its own, sharing its connections
#   --keep DIR      where the JSON and stderr of every run that failed,
#                   flipped or changed order are kept (default: a new
#                   directory under the temp dir, printed at the end)
# SOAK_BURNERS: CPU burners (default: the number of cores; 0 for none).
# SOAK_TIMEOUT_MS: the scenarios' timeouts (lab all --timeout-ms; default 300,
# a third of lab's own default, so a late look shows sooner).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q
exec python3 - "$@" <<'PY'
import json, os, shutil, signal, subprocess, sys, tempfile, threading, time

args = sys.argv[1:]
concurrent, shared, keep, extra = 1, False, None, []
while args:
    a = args.pop(0)
    if a == "--concurrent":
        concurrent = int(args.pop(0))
    elif a == "--shared":
        shared = True
    elif a == "--keep":
        keep = args.pop(0)
    else:
        extra.append(a)
runs = int(os.environ.get("RUNS", "50"))
burn = int(os.environ.get("SOAK_BURNERS", str(os.cpu_count() or 2)))
lab = os.path.abspath("target/release/lab")
out = tempfile.mkdtemp(prefix="lab-soak-")
keep = keep or tempfile.mkdtemp(prefix="lab-soak-kept-")
os.makedirs(keep, exist_ok=True)

burners = [subprocess.Popen(["sh", "-c", "while :; do :; done"]) for _ in range(burn)]
server = None

# The machine's stalls: a thread that sleeps 1 ms at a time notes how late
# it wakes. A timer of the scenarios' (SOAK_TIMEOUT_MS) that fires while lab
# cannot run looks to lab like a wait it never saw: a run's worst stall says
# how close the machine came to that.
stall = {"worst": 0.0}
def probe():
    t = time.monotonic()
    while True:
        time.sleep(0.001)
        n = time.monotonic()
        stall["worst"] = max(stall["worst"], n - t - 0.001)
        t = n
threading.Thread(target=probe, daemon=True).start()
stalls = {}
def stop():
    for p in burners:
        p.kill()
    burners.clear()
    if server and server.poll() is None:
        server.send_signal(signal.SIGINT)
        server.wait(timeout=30)

try:
    base_cmd = [lab, "all", "--format", "json", "--timeout-ms", os.environ.get("SOAK_TIMEOUT_MS", "300")] + extra
    if shared:
        server = subprocess.Popen([lab, "server", "--schema", "soak_server"], stdout=subprocess.PIPE, text=True)
        url = None
        for line in server.stdout:
            if line.startswith("DATABASE_URL="):
                url = line.strip().split("=", 1)[1]
                break
        if not url:
            sys.exit("soak: lab server did not start")
        # Each run gets its share of the server's 300 connections.
        base_cmd += ["--database-url", url, "--max-connections", str((300 - 10) // concurrent)]
    mode = f"{concurrent} at once" + (" on one server" if shared else ", each on its own server") if concurrent > 1 else "one at a time"
    print(f"soak: {runs} runs of lab all ({mode}) with {burn} CPU burners", file=sys.stderr)

    codes = {}
    i = 0
    while i < runs:
        batch = []
        stall["worst"] = 0.0
        for k in range(min(concurrent, runs - i)):
            n = i + k + 1
            cmd = list(base_cmd)
            if shared:
                cmd += ["--schema", f"soak_{k}"]
            o = open(os.path.join(out, f"{n}.json"), "w")
            e = open(os.path.join(out, f"{n}.err"), "w")
            batch.append((n, subprocess.Popen(cmd, stdout=o, stderr=e), o, e))
        for n, p, o, e in batch:
            code = p.wait()
            o.close()
            e.close()
            codes[n] = code
            stalls[n] = stall["worst"] * 1000
            print(f"run {n}: exit {code}; worst stall {stalls[n]:.0f} ms", file=sys.stderr)
            if code >= 2:
                sys.stderr.write(open(os.path.join(out, f"{n}.err")).read())
        i += len(batch)
finally:
    stop()

POOLS = {"queue", "stock-race", "invoice-numbering"}
def load(n):
    try:
        return json.load(open(os.path.join(out, f"{n}.json")))
    except Exception:
        return None

# A timeline's entries as (t_ms, session, result, statement verb).
def in_order(timeline):
    return [(e["t_ms"], e["session"], e["result"], (e["sql"].split() or [""])[0]) for e in timeline]

def plain(seq):
    return [e[1:] for e in seq]

# Whether a run's entries are `want` (entries without t_ms), where entries
# that reached lab within 1 ms of the first of them may come in any order:
# answers on different connections are stamped by different tasks as they
# arrive, and under load a task runs a moment late (a lock_timeout's error
# and the answer of the reader it let through, 0.1 ms apart either way).
SAME_MOMENT_MS = 1.0
def matches(seq, want):
    i, j = 0, 0
    while i < len(seq):
        k = i
        while k < len(seq) and seq[k][0] - seq[i][0] < SAME_MOMENT_MS:
            k += 1
        if sorted(e[1:] for e in seq[i:k]) != sorted(want[j:j + k - i]):
            return False
        i, j = k, j + k - i
    return j == len(want)

def shape(r):
    verdicts, orders, failed = {}, {}, {}
    for s in r["scenarios"]:
        for v in s["variants"]:
            k = f'{s["scenario"]}/{v["name"]}'
            verdicts[k] = "skipped" if v.get("skipped") else v["as_expected"]
            failed[k] = [c["id"] for c in v["checks"] if not c["ok"]]
            if s["scenario"] not in POOLS:
                orders[k] = in_order([e for e in v["timeline"] if e["result"] != "note"])
        if s.get("error"):
            k = f'{s["scenario"]}/{s["error"]["variant"]}'
            verdicts[k] = "error: " + s["error"]["message"]
    return verdicts, orders, failed

# Verdicts are compared with the first run that exited 0 (a failed first
# run would otherwise make every later, clean run look like a flip).
docs = {n: load(n) for n in sorted(codes)}
shapes = {n: shape(r) for n, r in docs.items() if r is not None}
clean = [n for n in shapes if codes[n] == 0]
base_run = (clean or list(shapes) or [None])[0]
base = shapes[base_run][:2] if base_run is not None else None
flips, changes, unseen, kept = {}, {}, {}, set()
for n in sorted(codes):
    if codes[n] != 0 or n not in shapes:
        kept.add(n)
    if n not in shapes or n == base_run:
        continue
    v, o, f = shapes[n]
    for k in sorted(set(v) | set(base[0])):
        if v.get(k) != base[0].get(k):
            flips.setdefault(k, []).append((n, v.get(k), f.get(k, [])))
            kept.add(n)

# Timeline orders are compared with each variant's usual order (the one most
# runs had; of equals, the earliest), so one odd run is one change, not the
# baseline against all the others. A run that differs only in a wait seen
# or not (lab's look came after a timer had already ended it: see the
# stalls) is listed apart: the verdict's own checks judge those waits.
def without_waits(seq):
    # (A step seen waiting ends "completed"; one not seen waiting, "ok".)
    # Entries are (session, result, verb), or the same after a t_ms.
    return [e[:-3] + (e[-3], "ok" if e[-2] == "completed" else e[-2], e[-1]) for e in seq if e[-2] != "waiting"]
usual = {}
for k in sorted({k for n in shapes for k in shapes[n][1]}):
    timed = [(n, shapes[n][1][k]) for n in sorted(shapes) if k in shapes[n][1]]
    counts = {}
    for n, seq in timed:
        counts.setdefault(tuple(plain(seq)), []).append(n)
    best = max(counts.items(), key=lambda kv: (len(kv[1]), -kv[1][0]))
    want = list(best[0])
    usual[k] = (best[1][0], len(best[1]), len(timed))
    for n, at in timed:
        if matches(at, want):
            continue
        seq = plain(at)
        first = next(j for j in range(max(len(seq), len(want)))
                     if j >= len(seq) or j >= len(want) or seq[j] != want[j])
        got = seq[first] if first < len(seq) else "-"
        was = want[first] if first < len(want) else "-"
        into = unseen if matches(without_waits(at), without_waits(want)) else changes
        into.setdefault(k, []).append((n, first, was, got))
        kept.add(n)
for n in kept | ({base_run} if kept and base_run else set()):
    for ext in ("json", "err"):
        src = os.path.join(out, f"{n}.{ext}")
        if os.path.exists(src):
            shutil.copy(src, os.path.join(keep, f"{n}.{ext}"))
shutil.rmtree(out, ignore_errors=True)

by_code = {}
for n, c in codes.items():
    by_code.setdefault(c, []).append(n)
print(f"runs: {runs}; exit codes: " + ", ".join(f"{c}: {len(ns)}" + (f" (runs {ns})" if c != 0 else "") for c, ns in sorted(by_code.items())))
worst = sorted(stalls.values())
if worst:
    print(f"worst stall per run (a sleeping process woken late; timeouts {base_cmd[base_cmd.index('--timeout-ms') + 1]} ms): "
          f"median {worst[len(worst) // 2]:.0f} ms, max {worst[-1]:.0f} ms")
print(f"verdict flips: {sum(len(x) for x in flips.values())}")
for k, xs in sorted(flips.items()):
    for n, verdict, failed in xs:
        print(f"  {k}: run {n}: {verdict} (baseline run {base_run}: {base[0].get(k)}); failed checks: {', '.join(failed) or '-'}; worst stall {stalls[n]:.0f} ms")
for title, found in (("timeline-order changes", changes), ("the same order but a wait seen differently (not failed)", unseen)):
    print(f"{title}: {sum(len(x) for x in found.values())}")
    for k, xs in sorted(found.items()):
        like, same, of = usual[k]
        for n, at, was, got in xs:
            print(f"  {k}: run {n}: entry {at} is {got}, in the usual order ({same} of {of} runs, e.g. run {like}) {was}; worst stall {stalls[n]:.0f} ms")
print(f"kept: {keep} ({len(kept)} run(s) and the baseline)" if kept else f"kept: nothing to keep ({keep} is empty)")
sys.exit(1 if flips or changes or any(c != 0 for c in codes.values()) else 0)
PY
