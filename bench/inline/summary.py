#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The uroce authors
"""The table of bench/inline/run.sh: each figure's median and min..max
over the rounds, per mode, and the ratio of each mode's median to the
native one (uroce-perf rows) or to native uroce-perf's p50 (perftest).

	summary.py OUT_DIR RUNS MODE...
"""
import json
import os
import re
import statistics
import sys


def perf_fig(path, key):
    try:
        with open(path) as f:
            res = json.load(f)['results'][0]
    except (OSError, ValueError, KeyError, IndexError):
        return None
    if res.get('errors') or res.get('samples') == 0:
        return None  # failed, or no round trip within the duration
    return res.get(key)


def perftest_typical(path):
    """t_typical of a perftest latency log, in us."""
    try:
        with open(path) as f:
            lines = f.read().splitlines()
    except OSError:
        return None
    for i, line in enumerate(lines):
        if 't_typical' in line and i + 1 < len(lines):
            cols = lines[i + 1].split()
            hdr = line.split()
            try:
                return float(cols[hdr.index('t_typical[usec]')])
            except (ValueError, IndexError):
                return None
    return None


def perftest_bw(path):
    """BW average [Gb/sec] of a perftest bandwidth log (--report_gbits)."""
    try:
        with open(path) as f:
            text = f.read()
    except OSError:
        return None
    m = re.search(r'^\s*\d+\s+\d+\s+[0-9.]+\s+([0-9.]+)', text, re.M)
    return float(m.group(1)) if m else None


def idle_share(path):
    """% of one core an idle process used (run.sh's idle_pair)."""
    try:
        with open(path) as f:
            return float(f.read())
    except (OSError, ValueError):
        return None


def stat(vals):
    vals = [v for v in vals if v is not None]
    if not vals:
        return None, '-'
    med = statistics.median(vals)
    return med, '%g..%g' % (min(vals), max(vals))


def main():
    out, runs, modes = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
    rows = [
        ('RC WRITE 8 B lat p50 (ns)', 'lat', 'p50_ns', 1),
        ('RC WRITE 8 B lat p99 (ns)', 'lat', 'p99_ns', 1),
        ('RC WRITE 64 KiB goodput (Gbit/s)', 'bw', 'gbps', 1),
        ('RC WRITE 8 B rate (M msg/s)', 'rate', 'mps', 1),
        ('RC READ 64 KiB goodput (Gbit/s)', 'read', 'read_gbps', 1),
    ]
    native = {}
    print('%-34s %-8s %12s %22s %8s' % ('figure', 'mode', 'median',
                                          'min..max', 'x native'))
    for title, kind, key, _ in rows:
        for m in modes:
            vals = []
            for r in range(1, runs + 1):
                p = os.path.join(out, '%s-%s-%d.json' % (kind, m, r))
                if kind in ('bw', 'rate', 'read'):
                    vals.append(perf_fig(p, 'median'))
                else:
                    vals.append(perf_fig(p, key))
            med, spread = stat(vals)
            if m == 'native':
                native[key] = med
            ratio = ('%.2f' % (med / native[key])
                     if med is not None and native.get(key) else '-')
            print('%-34s %-8s %12s %22s %8s' % (
                title, m, '-' if med is None else '%g' % med, spread, ratio))
    for tool in ('write_lat', 'send_lat'):
        for m in modes:
            if m == 'native':
                continue
            vals = [perftest_typical(os.path.join(
                out, '%s-%s-%d.log' % (tool, m, r)))
                for r in range(1, runs + 1)]
            med, spread = stat(vals)
            base = native.get('p50_ns')
            ratio = ('%.2f' % (med * 1000 / base)
                     if med is not None and base else '-')
            print('%-34s %-8s %12s %22s %8s' % (
                'ib_%s t_typical (us)' % tool, m,
                '-' if med is None else '%g' % med, spread, ratio))
    # ib_read_bw's server never polls: against native uroce-perf READ
    mode_rows(out, runs, modes, 'ib_read_bw 64 KiB (Gbit/s)', 'read_bw-%s-%d.log',
              perftest_bw, native.get('read_gbps'))
    mode_rows(out, runs, modes, 'idle process (% of a core)', 'idle-%s-%d.txt',
              idle_share, None)


def mode_rows(out, runs, modes, title, name, read, base):
    """One row per non-native mode: the median of read(file) over the
    rounds (name % (mode, round)), and its ratio to @base if any."""
    for m in modes:
        if m == 'native':
            continue
        med, spread = stat([read(os.path.join(out, name % (m, r)))
                            for r in range(1, runs + 1)])
        ratio = '%.2f' % (med / base) if med is not None and base else '-'
        print('%-34s %-8s %12s %22s %8s' % (
            title, m, '-' if med is None else '%g' % med, spread, ratio))

if __name__ == '__main__':
    main()
