#!/usr/bin/env python3
"""Summarise WORKSIZE_STEP_LOG files (docs/porting.md): per file, where a whole run's steps go.

Usage: step_log.py FILE...   (FILE.rankN files are read as their own runs)
Per run (a file may hold several, each from its header): the steps, their whole time, the host's step time's median, mean, p90, p99 and max,
the first 15 steps' time against 15 median steps, and the time the steps over 1.5x the median
add beyond it (the stalls). A rank whose host runs ahead of its devices (one GPU, no exchange)
waits for them in its last step only. The setup's phases (the `#` lines before each run) are printed as
they come."""
import csv
import statistics
import sys


def runs(path):
    """The runs appended to `path`, each a list of host step times (a header starts a run)."""
    out = []
    for r in csv.reader(open(path)):
        if r and r[0].startswith("#"):
            print(f"{path}: {','.join(r)[1:].strip()}")
        elif r and r[0] == "rank":
            out.append([])
        elif r and out:
            out[-1].append(float(r[3]))
    return [t for t in out if t]


def summary(path, t):
    s = sorted(t)
    med = statistics.median(t)
    q = lambda p: s[min(len(s) - 1, int(p * len(s)))]
    stall = sum(x - med for x in t if x > 1.5 * med)
    first = sum(t[:15])
    return (f"{path}: {len(t)} steps, {sum(t) / 1e3:.1f} ms; step us: median {med:.1f}, mean {statistics.mean(t):.1f}, "
            f"p90 {q(0.9):.1f}, p99 {q(0.99):.1f}, max {s[-1]:.1f}; first 15 {first:.0f} us against {15 * med:.0f}; "
            f"steps over 1.5x the median add {stall / 1e3:.2f} ms ({sum(1 for x in t if x > 1.5 * med)} steps)")


for p in sys.argv[1:]:
    found = runs(p)
    for i, t in enumerate(found):
        print(summary(p + (f" (run {i + 1} of {len(found)})" if len(found) > 1 else ""), t))
    if not found:
        print(f"{p}: no steps")
