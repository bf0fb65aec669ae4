#!/usr/bin/env python3
"""A list-append history of N transactions for the checker's benchmark, in
lab's JSON lines or (--edn) Jepsen's history.edn: C sessions over K keys (a
key retired after W appends; lab hunt retires at 32), run one after
another against a model of the keys, so every read is what a serializable
server would return. With --predicate, as `lab hunt --workload predicate`
makes them: a block of K keys at a time (retired after 2K appends), a
third of the operations a predicate read of two keys or more of it
(written as a read of each key, and named in the transaction's scans).
With --register, as `lab hunt --workload rw-register` makes them: writes
of values and reads of one value, each writer with the commit timestamp
the server would have recorded (`committed_at`, in commit order: the
version orders come from it); in EDN (Jepsen's rw-register) there are
none, and the checker orders what the reads and writes alone decide.
Usage:
hunt-history.py N [C] [K] [--edn] [--predicate | --register] [--writes W] > FILE"""
import json
import random
import sys

args = [a for a in sys.argv[1:] if not a.startswith("--")]
edn = "--edn" in sys.argv
predicate = "--predicate" in sys.argv
register = "--register" in sys.argv
writes = 32
if "--writes" in sys.argv:
    writes = int(sys.argv[sys.argv.index("--writes") + 1])
    args.remove(str(writes))
n = int(args[0])
clients = int(args[1]) if len(args) > 1 else 4
keys = int(args[2]) if len(args) > 2 else 4
rng = random.Random(1)
active = [[k, 0] for k in range(1, keys + 1)]
next_key = keys + 1
elem = 1
state = {}
out = sys.stdout
if not edn:
    header = {"lab": "hunt", "level": "serializable", "keys": keys, "clients": clients}
    if predicate:
        header["workload"] = "predicate"
    if register:
        header["workload"] = "rw-register"
    out.write(json.dumps(header) + "\n")
block, block_writes = 1, 0
t = 0
index = 0
for i in range(n):
    ops = []
    at = []
    scans = []
    start = t
    for _ in range(rng.randint(1, 4)):
        if predicate:
            t += 100
            kind = rng.randrange(3)
            k = block + rng.randrange(keys)
            if kind == 0:
                width = rng.randint(min(2, keys), keys)
                lo = block + rng.randrange(keys - width + 1)
                scans.append({"lo": lo, "hi": lo + width - 1, "op": len(ops)})
                for key in range(lo, lo + width):
                    ops.append(["r", key, list(state.get(key, []))])
                    at.append(t)
            elif kind == 1:
                ops.append(["r", k, list(state.get(k, []))])
                at.append(t)
            else:
                state.setdefault(k, []).append(elem)
                ops.append(["append", k, elem])
                at.append(t)
                elem += 1
                block_writes += 1
                if block_writes >= 2 * keys:
                    block, block_writes = block + keys, 0
            continue
        slot = rng.randrange(keys)
        k = active[slot][0]
        t += 100
        if rng.random() < 0.5:
            if register:
                ops.append(["r", k, state[k][-1] if state.get(k) else None])
            else:
                ops.append(["r", k, list(state.get(k, []))])
        else:
            state.setdefault(k, []).append(elem)
            ops.append(["w" if register else "append", k, elem])
            elem += 1
            active[slot][1] += 1
            if active[slot][1] >= writes:
                active[slot] = [next_key, 0]
                next_key += 1
        at.append(t)
    t += 100
    p = i % clients
    if edn:
        def mop(o, done):
            if o[0] in ("append", "w"):
                return f"[:{o[0]} {o[1]} {o[2]}]"
            if register:
                v = o[2] if done and o[2] is not None else "nil"
                return f"[:r {o[1]} {v}]"
            v = ("[" + " ".join(map(str, o[2])) + "]") if done else "nil"
            return f"[:r {o[1]} {v}]"
        inv = " ".join(mop(o, False) for o in ops)
        ok = " ".join(mop(o, True) for o in ops)
        out.write(f"{{:type :invoke, :f :txn, :value [{inv}], :time {start}, :process {p}, :index {index}}}\n")
        out.write(f"{{:type :ok, :f :txn, :value [{ok}], :time {t}, :process {p}, :index {index + 1}}}\n")
        index += 2
    else:
        txn = {"index": i, "session": p + 1, "type": "ok", "start": start, "end": t, "ops": ops, "at": at}
        if scans:
            txn["scans"] = scans
        if register and any(o[0] == "w" for o in ops):
            s, us = divmod(i, 1000000)
            txn["xid"] = 1000 + i
            txn["committed_at"] = f"2026-12-07 10:{s // 60:02d}:{s % 60:02d}.{us:06d}"
        out.write(json.dumps(txn, separators=(",", ":")) + "\n")
