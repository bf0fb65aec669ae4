#!/usr/bin/env python3
"""A list-append history of N transactions in lab's JSON lines, for the
checker's benchmark: C sessions over K keys (a key retired after 32
appends, as lab hunt does), run one after another against a model of the
keys, so every read is what a serializable server would return. Usage:
hunt-history.py N [C] [K] > FILE"""
import json
import random
import sys

n = int(sys.argv[1])
clients = int(sys.argv[2]) if len(sys.argv) > 2 else 4
keys = int(sys.argv[3]) if len(sys.argv) > 3 else 4
rng = random.Random(1)
active = [[k, 0] for k in range(1, keys + 1)]
next_key = keys + 1
elem = 1
state = {}
out = sys.stdout
out.write(json.dumps({"lab": "hunt", "level": "serializable", "keys": keys, "clients": clients}) + "\n")
t = 0
for i in range(n):
    ops = []
    at = []
    start = t
    for _ in range(rng.randint(1, 4)):
        slot = rng.randrange(keys)
        k = active[slot][0]
        t += 100
        if rng.random() < 0.5:
            ops.append(["r", k, list(state.get(k, []))])
        else:
            state.setdefault(k, []).append(elem)
            ops.append(["append", k, elem])
            elem += 1
            active[slot][1] += 1
            if active[slot][1] >= 32:
                active[slot] = [next_key, 0]
                next_key += 1
        at.append(t)
    t += 100
    out.write(json.dumps({"index": i, "session": i % clients + 1, "type": "ok", "start": start,
                          "end": t, "ops": ops, "at": at}, separators=(",", ":")) + "\n")
