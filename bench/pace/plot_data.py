#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The uroce authors
"""pace.json -> gnuplot data: target_Mbps achieved_Mbps group label."""
import json
import sys

res = json.load(open(sys.argv[1]))
with open(sys.argv[2], "w") as f:
    f.write(f"# ceiling {res['ceiling_bps'] / 1e6:.3f} Mbit/s\n")
    for r in res["results"]:
        if r["group"] == "ceiling":
            continue
        group = "above" if r["above_ceiling"] else r["group"]
        f.write(f"{r['target_bps'] / 1e6:.6f} {r['achieved_bps'] / 1e6:.6f}"
                f" {group} {r['name']}\n")
    f.write(f"\n\n{res['ceiling_bps'] / 1e6:.6f}\n")
