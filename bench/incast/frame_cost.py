#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The uroce authors
"""What cc = dcqcn costs a frame when nothing is congested: uroce-perf --loop
over a ringlink pair (both ends in one process, one busy thread), RC WRITE
of 64 B (one frame a message, and its ACK share), message rate, with
[port] cc = off and cc = dcqcn in alternating rounds; the thread's CPU
cycles per message of each round, the medians, the spreads and their ratio.

  bench/incast/frame_cost.py [--build build] [--rounds 7] [--duration 1]
                             [--json FILE]

Run it under the shared lock (flock /work/wt/test.lock ...).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile


def one(perf, conf, cc, dur):
    env = dict(os.environ, UROCE_PORT0_CC=cc, UROCE_PORT1_CC=cc)
    with tempfile.NamedTemporaryFile(suffix='.json') as f:
        cmd = [perf, '-c', conf, '--loop', '-w', 'write', '-m', 'rate',
               '-s', '64', '-D', str(dur), '--rounds', '1', '--no-raw',
               '--quiet', '--json', f.name]
        p = subprocess.run(cmd, env=env, capture_output=True, text=True,
                           timeout=120)
        if p.returncode != 0:
            sys.stderr.write(p.stdout + p.stderr)
            raise SystemExit('frame_cost.py: %s failed' % ' '.join(cmd))
        j = json.load(open(f.name))
    rows = j['rows'] if 'rows' in j else j['results']
    row = rows[0]
    t = row.get('transport', row)
    return {'cycles_per_msg': t['cycles_per_msg'],
            'cpu_cycles_per_msg': t['cpu_cycles_per_msg'],
            'retransmits': t.get('retransmits', 0)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--build', default='build')
    ap.add_argument('--rounds', type=int, default=7)
    ap.add_argument('--duration', type=float, default=1)
    ap.add_argument('--json')
    a = ap.parse_args()
    here = os.path.dirname(os.path.abspath(__file__))
    conf = os.path.join(here, '..', '..', 'config', 'ringlink-loop.conf')
    perf = os.path.join(a.build, 'app', 'perf', 'uroce-perf')
    res = {'off': [], 'dcqcn': []}
    for r in range(a.rounds):
        for cc in ('off', 'dcqcn'):
            x = one(perf, conf, cc, a.duration)
            res[cc].append(x)
            print('round %d cc %-5s %.0f CPU cycles/msg (%.0f wall)' % (
                r, cc, x['cpu_cycles_per_msg'], x['cycles_per_msg']),
                file=sys.stderr, flush=True)
    out = {}
    for k in ('cpu_cycles_per_msg', 'cycles_per_msg'):
        m = {cc: statistics.median(v[k] for v in res[cc]) for cc in res}
        out[k] = {cc: {'median': m[cc],
                       'min': min(v[k] for v in res[cc]),
                       'max': max(v[k] for v in res[cc])} for cc in res}
        out[k]['ratio'] = m['dcqcn'] / m['off']
        # each round's dcqcn against the off round right before it
        pairs = [d[k] / o[k] for o, d in zip(res['off'], res['dcqcn'])]
        out[k]['pair_ratio'] = {'median': statistics.median(pairs),
                                'min': min(pairs), 'max': max(pairs)}
        print('%s: off %.0f (%.0f..%.0f), dcqcn %.0f (%.0f..%.0f), '
              'dcqcn/off %.3f; paired rounds %.3f (%.3f..%.3f)' % (
                  k, m['off'], out[k]['off']['min'], out[k]['off']['max'],
                  m['dcqcn'], out[k]['dcqcn']['min'], out[k]['dcqcn']['max'],
                  out[k]['ratio'], out[k]['pair_ratio']['median'],
                  out[k]['pair_ratio']['min'], out[k]['pair_ratio']['max']))
    if a.json:
        with open(a.json, 'w') as f:
            json.dump({'rounds': res, 'summary': out}, f, indent=1)


if __name__ == '__main__':
    main()
