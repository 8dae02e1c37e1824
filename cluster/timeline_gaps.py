#!/usr/bin/env python3
"""Where a split heat step loses time on the device: reads WORKSIZE_TIMELINE files (one per rank,
docs/porting.md) of a data job whose slices launch a boundary part and an interior part per step
(the engine's overlap), and prints per slice the medians over the steady steps (the first and the
last 5% left out) of:
  step      end of one step's last launch to the end of the next's
  busy      the step's launches' device time
  gap_b     end of the previous launch to the start of the boundary launch (the device idle)
  gap_i     end of the boundary launch to the start of the interior launch
  w_late    end of the halo write that the boundary launch waits for, after the previous launch's end
            (> 0: the boundary launch could not start earlier because the rows came late)
  b_after_w start of the boundary launch after max(previous launch end, halo write end)
Each file may hold several runs (the examples run once to warm up): the last one is read.
usage: timeline_gaps.py FILE [FILE.rank1 ...]"""
import csv, statistics, sys, collections

rows = []
for path in sys.argv[1:]:
    with open(path) as f:
        runs = f.read().split("rank,slice,device,step,")
    last = "rank,slice,device,step," + runs[-1]
    rows += [r for r in csv.DictReader(last.splitlines()) if r["slice"] and r["start_us"]]
by = collections.defaultdict(lambda: collections.defaultdict(list))  # slice -> step -> entries
for r in rows:
    by[r["slice"]][int(r["step"])].append(r)

def f(r, k):
    return float(r[k])

for sl in sorted(by, key=int):
    steps = by[sl]
    ks = sorted(steps)
    lo, hi = ks[0] + max(1, len(ks) // 20), ks[-1] - max(1, len(ks) // 20)
    acc = collections.defaultdict(list)
    early = []  # the first steps' durations, left out of the medians
    for s in ks:
        if s - 1 not in steps:
            continue
        if s < lo or s > hi:
            pe = [e for e in steps[s - 1] if not e["kernel"].startswith(("halo", "read:"))]
            ce = [e for e in steps[s] if not e["kernel"].startswith(("halo", "read:"))]
            if s < lo and pe and ce:
                early.append(max(f(e, "end_us") for e in ce) - max(f(e, "end_us") for e in pe))
            continue
        prev = [e for e in steps[s - 1] if not e["kernel"].startswith("halo") and not e["kernel"].startswith("read:")]
        cur = [e for e in steps[s] if not e["kernel"].startswith("halo") and not e["kernel"].startswith("read:")]
        writes = [e for e in steps[s - 1] if e["kernel"].startswith("halo-write")]
        if not prev or not cur:
            continue
        prev_end = max(f(e, "end_us") for e in prev)
        cur.sort(key=lambda e: f(e, "start_us"))
        acc["step"].append(max(f(e, "end_us") for e in cur) - prev_end)
        acc["busy"].append(sum(f(e, "end_us") - f(e, "start_us") for e in cur))
        acc["gap_b"].append(f(cur[0], "start_us") - prev_end)
        if len(cur) > 1:
            acc["gap_i"].append(f(cur[1], "start_us") - f(cur[0], "end_us"))
        if writes:
            w_end = max(f(e, "end_us") for e in writes)
            acc["w_late"].append(w_end - prev_end)
            acc["b_after_w"].append(f(cur[0], "start_us") - max(prev_end, w_end))
    if not acc["step"]:
        continue
    med = {k: statistics.median(v) for k, v in acc.items()}
    print(f"slice {sl}: {len(acc['step'])} steps; medians in us: " +
          ", ".join(f"{k} {med[k]:.1f}" for k in ("step", "busy", "gap_b", "gap_i", "w_late", "b_after_w") if k in med))
    st = sorted(acc["step"])
    q = lambda p: st[min(len(st) - 1, int(p * len(st)))]
    slow = [x for x in st if x > 1.5 * med["step"]]
    print(f"  step: mean {statistics.mean(st):.1f}, p10 {q(0.1):.1f}, p90 {q(0.9):.1f}, p99 {q(0.99):.1f}, max {st[-1]:.1f};"
          f" {len(slow)} steps over 1.5x the median hold {sum(x - med['step'] for x in slow) / sum(st) * 100:.1f} % of the time")
    first = [e for e in steps[ks[0]] if not e["kernel"].startswith(("halo", "read:"))]
    if first and early:
        print(f"  the first {len(early) + 1} steps: {sum(early) + max(f(e, 'end_us') for e in first) - min(f(e, 'start_us') for e in first):.1f} us"
              f" (the first launch starts {min(f(e, 'start_us') for e in first):.1f} us after it was queued),"
              f" {len(early) + 1} steady steps: {(len(early) + 1) * statistics.mean(st):.1f} us")
    for k in ("gap_b", "gap_i"):
        if acc[k]:
            g = sorted(acc[k])
            print(f"  {k}: mean {statistics.mean(g):.1f}, p90 {g[int(0.9 * (len(g) - 1))]:.1f}, max {g[-1]:.1f}")
