#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The uroce authors
#
# Checks the JSON of a uroce-perf run (run_perf.sh): every row has the
# transport's figures and its raw ceiling; messages completed is what -n
# asked for, bytes = messages x size, no error, ratios present and
# positive (--bidir: messages of both sides); every row measured in
# --rounds rounds (3 by default, 1 with --window), its median between
# the smallest and largest round and equal to the figure it names, the
# ceiling_moved flag a boolean that agrees with the ceiling's spread and
# moved_limit; the backend the options
# chose (--verbs or native); --srq: the SRQ holds min(2 x --inflight,
# qps x depth) receives; --window: a pace object with a row per QP, none
# without (with --rate or --rate-total: each QP with a target, sent and
# held by its pacer). No timing threshold.
#
#	check_perf_json.py FILE [the client's options: -n N, -s N, -m M, -a]
import json
import sys


def opt(args, name, default):
    return args[args.index(name) + 1] if name in args else default


def fail(msg):
    print("check_perf_json: " + msg)
    sys.exit(1)


def check_rounds(what, s, rounds):
    """s: a row or its raw object, with its figure over the rounds."""
    for k in ("rounds", "figure", "median", "min", "max", "round_values"):
        if k not in s:
            fail(f"{what}: no {k}")
    if s["rounds"] != rounds or len(s["round_values"]) != rounds:
        fail(f"{what}: {s['rounds']} rounds, {len(s['round_values'])} "
             f"values, wanted {rounds}")
    if not s["min"] <= s["median"] <= s["max"]:
        fail(f"{what}: median {s['median']} not in "
             f"{s['min']}..{s['max']}")
    if sorted(s["round_values"])[(rounds - 1) // 2] != s["median"] or \
            min(s["round_values"]) != s["min"] or \
            max(s["round_values"]) != s["max"]:
        fail(f"{what}: median, min, max not those of {s['round_values']}")
    # The median is the median round's figure (printed to fewer places).
    fig = s[s["figure"]]
    if abs(fig - s["median"]) > 1e-3 * max(abs(fig), 1e-3) + 1e-4:
        fail(f"{what}: {s['figure']} {fig}, median {s['median']}")


def check_moved(what, r, limit):
    if not isinstance(r.get("ceiling_moved"), bool):
        fail(f"{what}: ceiling_moved {r.get('ceiling_moved')} not a boolean")
    lo, hi = r["raw"]["min"], r["raw"]["max"]
    spread = (hi - lo) / lo if lo > 0 else 0
    # The figures are printed to 6 places: a small min is rounded most.
    tol = 1e-3 + (spread + 1) * 1e-6 / lo if lo > 0 else 1e-3
    if abs(r["ceiling_spread"] - spread) > tol:
        fail(f"{what}: ceiling_spread {r['ceiling_spread']}, the rounds "
             f"say {spread}")
    # Away from the limit, the flag is the spread over the limit.
    if abs(spread - limit) > tol and r["ceiling_moved"] != (spread > limit):
        fail(f"{what}: ceiling_moved {r['ceiling_moved']}, spread "
             f"{spread}, limit {limit}")


def check_bw(r, iters):
    for k in ("messages", "bytes", "errors", "failed_qps", "raw", "ratio",
              "goodput_gbps", "msg_rate_mps", "cycles_per_msg", "retransmits"):
        if k not in r:
            fail(f"size {r.get('size')}: no {k}")
    if r["messages"] <= 0 or (iters and r["messages"] != iters):
        fail(f"size {r['size']}: {r['messages']} messages, wanted {iters}")
    if r["bytes"] != r["messages"] * r["size"]:
        fail(f"size {r['size']}: {r['bytes']} bytes != messages x size")
    if r["errors"] != 0 or r["failed_qps"] != 0:
        fail(f"size {r['size']}: {r['errors']} errors, "
             f"{r['failed_qps']} QPs failed")
    raw = r["raw"]
    if raw is None or raw["frames"] <= 0 or raw["pps"] <= 0:
        fail(f"size {r['size']}: no raw ceiling: {raw}")
    if r["ratio"] is None or not r["ratio"] > 0:
        fail(f"size {r['size']}: ratio {r['ratio']}")
    if not (r["goodput_gbps"] > 0 and r["cycles_per_msg"] > 0):
        fail(f"size {r['size']}: figures not positive")


def check_lat(r, iters):
    for k in ("samples", "p50_ns", "p99_ns", "p999_ns", "max_ns", "raw",
              "ratio_p50", "errors"):
        if k not in r:
            fail(f"latency: no {k}")
    if r["errors"] != 0 or r["raw"] is None or r["raw"]["errors"] != 0:
        fail("latency: errors")
    for s in (r, r["raw"]):
        if s["samples"] <= 0 or (iters and s["samples"] != iters):
            fail(f"latency: {s['samples']} samples, wanted {iters}")
        if not 0 < s["p50_ns"] <= s["p99_ns"] <= s["p999_ns"] <= s["max_ns"]:
            fail(f"latency: percentiles out of order: {s}")
    if r["ratio_p50"] is None or not r["ratio_p50"] > 0:
        fail(f"latency: ratio {r['ratio_p50']}")


def main():
    path, args = sys.argv[1], sys.argv[2:]
    with open(path) as f:
        d = json.load(f)
    want_rounds = int(opt(args, "--rounds", "1" if "--window" in args else "3"))
    if d.get("rounds") != want_rounds or "moved_limit" not in d:
        fail(f"rounds {d.get('rounds')}, wanted {want_rounds}; moved_limit "
             f"{d.get('moved_limit')}")
    backend = "verbs" if "--verbs" in args else "native"
    if d.get("backend") != backend:
        fail(f"backend {d.get('backend')}, wanted {backend}")
    iters = int(opt(args, "-n", "0"))
    bw_iters = iters * (2 if "--bidir" in args else 1)	# both sides send
    modes = opt(args, "-m", "bw").split(",")
    rows = d["results"]
    want = {"bw": 0, "rate": 0, "lat": 0}
    for r in rows:
        want[r["mode"]] += 1
        if r["mode"] == "lat":
            check_lat(r, iters)
        else:
            check_bw(r, bw_iters)
            if "-s" in args and "-a" not in args and \
                    r["size"] != int(opt(args, "-s", "0")):
                fail(f"size {r['size']}, asked {opt(args, '-s', '')}")
        what = f"{r['mode']} {r['size']}"
        check_rounds(what, r, want_rounds)
        check_rounds(what + " raw", r["raw"], want_rounds)
        check_moved(what, r, d["moved_limit"])
    # --srq: one SRQ holds what can be in flight, not qps x depth receives.
    qps, depth = int(opt(args, "--qps", "1")), int(opt(args, "-q", "128"))
    srq_wr = min(2 * int(opt(args, "--inflight", str(qps * depth))), qps * depth)
    if d.get("srq") != ("--srq" in args):
        fail(f"srq {d.get('srq')}, --srq {'--srq' in args}")
    if "--srq" in args and d.get("recv_wqes") != srq_wr:
        fail(f"recv_wqes {d.get('recv_wqes')}, wanted {srq_wr}")
    pace = d.get("pace")
    if ("--window" in args) != (pace is not None):
        fail(f"pace {pace}, --window {'--window' in args}")
    if pace is not None and (pace["windows_measured"] <= 0 or
                             len(pace["qps"]) != qps):
        fail(f"pace: {pace['windows_measured']} windows, "
             f"{len(pace['qps'])} QPs, wanted {qps}")
    # A rate limit: every QP has its target, sent, and waited for tokens.
    if pace is not None and ("--rate" in args or "--rate-total" in args):
        for q in pace["qps"]:
            if not (q["target_bps"] > 0 and q["achieved_bps"] > 0 and
                    q["pace_wait_us"] > 0):
                fail(f"pace: QP {q['qpn']} not paced: {q}")
    for m in modes:
        if want[m] == 0:
            fail(f"no {m} row")
    if "-a" in args and want["bw"] < 2:
        fail("a sweep with fewer than two sizes")
    print(f"check_perf_json: {len(rows)} rows ok")


main()
