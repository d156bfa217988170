#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The uroce authors
"""The pacing scenarios' uroce-perf JSONs -> pace.json and a table (run.sh).

    summary.py OUT_JSON RUN.json...     the suite (names as run.sh gives them)
    summary.py --check RUN.json         the integration test: the run has its
                                        pace figures, every QP sent and was
                                        held by its pacer, no error

A run's "pace" object (uroce-perf --window, app/perf/pace.c) holds the frame
bytes per window against the target, the worst window and QP, and the
engine's cycles per frame. A run near the ceiling (NAME) has its own
ceiling: the unpaced run ceiling-NAME just before it, which set its target.
The unpaced run after-NAME just after it shows the link held its speed
through the run; a run whose two ceilings differed by more than run.sh's
PACE_MOVED was run again, and its tries are listed (movedK-NAME, with
their ceilings) but not counted.
A scenario run more than once (NAME, NAME-2, ...) is reported by its
median run (by aggregate error; the cycles per frame are the median of the
runs'), with every run's error beside it, and the ceiling of that run.
"stalled c/s": the share of the median run's time in which the client's
and the server's loops stalled for over 1 ms (gap_share, peer_gap_share:
on the VM, the host taking the vCPU away).
Verdicts: aggregate within 1%, each QP within 5% (multi), targets
above the ceiling (the run's own, else the median of all) reported as
such. The cycles ratio, 10,000 QPs against 1, is given twice: from the
medians of cycles per frame, and from the medians of each run's cycles per
frame against its own ceiling run's (cycles_vs_ceiling), which cancels the
host's speed at the time of the run. Each is split into the port's
transmit bursts (port_tx_cycles_per_frame: memif's copy into the shared
ring, the part that swings up to 4x with the host) and the rest, the
stack's own (stack_cycles_per_frame), whose ratio is given too.
"""
import json
import os
import re
import statistics
import sys


def load(path):
    with open(path) as f:
        return json.load(f)


def check(path):
    run = load(path)
    pace = run.get("pace")
    ok = pace is not None and pace["windows_measured"] >= 1 and \
        len(pace["qps"]) == run["qps"] and \
        pace["cycles_per_frame"] > 0 and pace["frames_per_loop"] > 0 and \
        pace.get("port_tx_cycles_per_frame", 0) > 0 and \
        0 <= pace["preempted_share"] < 1 and 0 <= pace["lost_share"] < 1 \
        and 0 <= pace["gap_share"] < 1 and pace["peer_gap_share"] < 1
    for q in pace["qps"] if pace else []:
        ok &= q["achieved_bps"] > 0 and q["pace_wait_us"] > 0
    for r in run["results"]:
        ok &= r.get("errors", 1) == 0 and r.get("messages", 0) > 0
    print(f"check {path}: {'ok' if ok else 'FAILED'}")
    return 0 if ok else 1


def group(name):
    if name.startswith("ceiling"):
        return "ceiling"
    if name.startswith("after-"):
        return "after"
    if name.startswith("moved"):
        return "moved"
    return "single" if name.startswith("1x") and "80pct" not in name \
        else "multi"


def base(name):
    return re.sub(r"-[0-9]+$", "", name)


def median_runs(runs):
    """{scenario: (median run, [runs])} for the scenarios but the ceilings."""
    by = {}
    for n in sorted(runs):
        if group(n) in ("single", "multi"):
            by.setdefault(base(n), []).append(runs[n])
    out = {}
    for b, rs in by.items():
        rs.sort(key=lambda r: r["pace"]["error"])
        out[b] = (rs[(len(rs) - 1) // 2], rs)
    return out


def achieved(runs, name):
    """A run's frame bytes per second, 0 if there is no such run."""
    return runs[name]["pace"]["achieved_bps"] if name in runs else 0


def unpaced_of(runs, grp):
    """{NAME: frame bytes per second} of the unpaced runs GRP-NAME."""
    return {n[len(grp) + 1:]: achieved(runs, n)
            for n in runs if group(n) == grp}


def moved_runs(runs, scenario):
    """The tries of a scenario run again because its link changed speed
    (run.sh: movedK-NAME, between movedK-ceiling-NAME and
    movedK-after-NAME)."""
    out = []
    for n in sorted(runs):
        m = re.match(r"moved([0-9]+)-(.*)$", n)
        if not m or group(m.group(2)) not in ("single", "multi") or \
                base(m.group(2)) != scenario:
            continue
        k, name = m.groups()
        out.append({"name": name, "try": int(k),
                    "error": runs[n]["pace"]["error"],
                    "ceiling_bps": achieved(runs, f"moved{k}-ceiling-{name}"),
                    "ceiling_after_bps": achieved(runs,
                                                  f"moved{k}-after-{name}")})
    return out


def vs_ceiling(runs, rs):
    """The median over runs rs of cycles per frame against the run's own
    ceiling run's (the unpaced stream just before it, on the same host
    phase): the host's swings, up to 2x within minutes, cancel out."""
    v = [r["pace"]["cycles_per_frame"] /
         runs["ceiling-" + r["name"]]["pace"]["cycles_per_frame"]
         for r in rs if "ceiling-" + r["name"] in runs and
         runs["ceiling-" + r["name"]]["pace"]["cycles_per_frame"] > 0]
    return statistics.median(v) if v else 0


def median_of(rs, key):
    """The median over runs rs of pace[key], None if a run lacks it."""
    v = [r["pace"].get(key) for r in rs]
    return None if None in v else statistics.median(v)


def stack_cycles(rs):
    """The median over runs rs of cycles per frame less the port's, None
    if a run lacks the port's figure."""
    if any("port_tx_cycles_per_frame" not in r["pace"] for r in rs):
        return None
    return statistics.median(r["pace"]["cycles_per_frame"] -
                             r["pace"]["port_tx_cycles_per_frame"]
                             for r in rs)


def verdict(r):
    if r["above_ceiling"]:
        return "above ceiling"
    if abs(r["error"]) > 0.01 or \
            (r["group"] == "multi" and abs(r["worst_qp_error"]) > 0.05):
        return "MISSED"
    return "ok"


def stalls(r):
    """The client's and the server's time stalled, in %: 'c/s'."""
    c, s = r.get("gap_share"), r.get("peer_gap_share")
    if c is None:
        return "-"
    return f"{c * 100:.2f}/" + (f"{s * 100:.2f}" if s is not None and
                               s >= 0 else "-")


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--check":
        return check(sys.argv[2])
    if len(sys.argv) < 3:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    runs = {}
    for p in sys.argv[2:]:
        run = load(p)
        if "pace" not in run:       # a run that failed: said by run.sh
            print(f"summary.py: {p}: no pace figures", file=sys.stderr)
            continue
        run["name"] = os.path.basename(p)[:-5]
        runs[run["name"]] = run
    ceil_of = unpaced_of(runs, "ceiling")
    after_of = unpaced_of(runs, "after")
    if not ceil_of:
        print("summary.py: no ceiling run", file=sys.stderr)
        return 1
    ceilings = [ceil_of[n] for n in sorted(ceil_of)]
    ceiling = statistics.median(ceilings)
    scen = median_runs(runs)
    order = sorted(scen, key=lambda n: (group(n) == "multi",
                                        scen[n][0]["qps"],
                                        scen[n][0]["pace"]["target_bps"]))
    rows = []
    for name in order:
        run, all_runs = scen[name]
        p = run["pace"]
        own = ceil_of.get(run["name"], 0)
        row = {"group": group(name), "name": name, "qps": run["qps"],
               "target_bps": p["target_bps"],
               "achieved_bps": p["achieved_bps"], "error": p["error"],
               "worst_window_error": p["worst_window_error"],
               "worst_qp_error": p["worst_qp_error"],
               "cycles_per_frame": statistics.median(
                   r["pace"]["cycles_per_frame"] for r in all_runs),
               "cycles_vs_ceiling": vs_ceiling(runs, all_runs),
               "port_tx_cycles_per_frame": median_of(
                   all_runs, "port_tx_cycles_per_frame"),
               "stack_cycles_per_frame": stack_cycles(all_runs),
               "frames": p["frames"],
               "timers_per_frame": p.get("timers_per_frame"),
               "frames_per_loop": p.get("frames_per_loop"),
               "preempted_loops": p["preempted_loops"],
               "preempted_share": p.get("preempted_share"),
               "gap_share": p.get("gap_share"),
               "peer_gap_share": p.get("peer_gap_share"),
               "lost_share": p.get("lost_share"),
               "lost_window_share": p.get("lost_window_share"),
               "lost_turn_share": p.get("lost_turn_share"),
               "idle_share": p.get("idle_share"),
               "retransmits": run["results"][0].get("retransmits", 0),
               "ceiling_bps": own,
               "ceiling_after_bps": after_of.get(run["name"], 0),
               "moved_runs": moved_runs(runs, name),
               "above_ceiling": p["target_bps"] > (own or ceiling),
               "runs_error": [r["pace"]["error"] for r in all_runs]}
        row["verdict"] = verdict(row)
        rows.append(row)
    cyc = {r["qps"]: r["cycles_per_frame"] for r in rows
           if r["group"] == "multi"}
    ratio = cyc[10000] / cyc[1] if cyc.get(1) and cyc.get(10000) else 0
    rel = {r["qps"]: r["cycles_vs_ceiling"] for r in rows
           if r["group"] == "multi"}
    rel_ratio = rel[10000] / rel[1] if rel.get(1) and rel.get(10000) else 0
    multi = {r["qps"]: r for r in rows if r["group"] == "multi"}
    stack = {n: multi.get(n, {}).get("stack_cycles_per_frame")
             for n in (1, 10000)}
    stack_ratio = stack[10000] / stack[1] if stack[1] and stack[10000] else 0
    first = scen[order[0]][0]["pace"]
    res = {"window_s": first["window_s"],
           "windows_measured": first["windows_measured"], "msg": 65536,
           "ceiling_bps": ceiling, "ceiling_runs_bps": ceilings,
           "cycles_ratio_10000_vs_1": ratio,
           "cycles_ratio_own_ceiling": rel_ratio,
           "stack_cycles_ratio_10000_vs_1": stack_ratio,
           "results": rows}
    with open(sys.argv[1], "w") as f:
        json.dump(res, f, indent=1)
    print(f"{'scenario':<12} {'QPs':>6} {'ceiling':>9} {'target Mb/s':>12}"
          f" {'got Mb/s':>12} {'error':>9} {'worst 1s':>9} {'worst QP':>9}"
          f" {'cyc/frm':>8} {'resent':>7} {'stalled c/s':>12}"
          f"  {'verdict':<13} runs")
    for r in rows:
        many = len(r["runs_error"]) > 1
        runs_col = " ".join(f"{e * 100:+.2f}%" for e in r["runs_error"]) \
            if many else ""
        own = f"{r['ceiling_bps'] / 1e6:.0f}" if r["ceiling_bps"] else "-"
        print(f"{r['name']:<12} {r['qps']:>6} {own:>9}"
              f" {r['target_bps'] / 1e6:>12.3f}"
              f" {r['achieved_bps'] / 1e6:>12.3f} {r['error'] * 100:>+8.3f}%"
              f" {r['worst_window_error'] * 100:>+8.3f}%"
              f" {r['worst_qp_error'] * 100:>+8.3f}%"
              f" {r['cycles_per_frame']:>8.0f} {r['retransmits']:>7}"
              f" {stalls(r):>12}"
              f"  {r['verdict']:<13} {runs_col}".rstrip())
    print(f"ceilings (Mb/s, each run's own, the unpaced run before it):"
          f" median {ceiling / 1e6:.0f}, {min(ceilings) / 1e6:.0f} to"
          f" {max(ceilings) / 1e6:.0f} over {len(ceilings)} runs")
    for r in rows:
        for m in r["moved_runs"]:
            print(f"run again: {m['name']} (try {m['try']}, error"
                  f" {m['error'] * 100:+.2f}%): its ceiling moved from"
                  f" {m['ceiling_bps'] / 1e6:.0f} to"
                  f" {m['ceiling_after_bps'] / 1e6:.0f} Mb/s")
    if ratio:
        print(f"engine cycles per frame, 10000 QPs vs 1: {ratio:.2f}x"
              f" (medians); {rel_ratio:.2f}x against each run's own"
              f" ceiling ({rel[10000]:.2f}x / {rel[1]:.2f}x)")
    if stack_ratio:
        print(f"of which the port's transmit:"
              f" {multi[10000]['port_tx_cycles_per_frame']:.0f}"
              f" vs {multi[1]['port_tx_cycles_per_frame']:.0f}; the"
              f" stack's own: {stack[10000]:.0f} vs {stack[1]:.0f},"
              f" {stack_ratio:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
