#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The uroce authors
"""The incast benchmark: uroce-incast with 2, 4 and 8 senders, cc = off and
cc = dcqcn in alternating rounds (off, dcqcn, off, dcqcn, ...), each figure
the median of the rounds with their range. JSON out; --plot PNG (gnuplot):
each sender's goodput and the bottleneck's queue over time, cc = off beside
cc = dcqcn, from the last round of the largest incast.

  bench/incast/run.py [--build build] [--rounds 3] [--senders 2,4,8]
                      [--duration 5] [--json FILE] [--plot FILE.png]
                      [-- extra uroce-incast options]

Run it under the shared lock (flock /work/wt/test.lock ...) on a machine
where nothing else is busy: the program has two busy threads.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

FIGS = ['goodput_mbps', 'util', 'util_vs_off', 'goodput_util', 'drops', 'retransmits',
        'timeouts', 'jain_mean', 'jain_min', 'q_p50', 'q_p99', 'marked',
        'np_cnp_sent', 'rp_cnp_handled', 'switch_away']


def run_one(prog, senders, cc, args, extra):
    cmd = [prog, '--senders', str(senders), '--cc', cc,
           '--duration', str(args.duration), '--warmup', str(args.warmup)]
    if cc == 'dcqcn':
        for kv in args.dcqcn_set:
            cmd += ['--set', kv]
    cmd += extra
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        sys.stderr.write(p.stderr)
        raise SystemExit('run.py: %s failed' % ' '.join(cmd))
    return json.loads(p.stdout)


def summary(runs):
    out = {}
    for f in FIGS:
        v = [r[f] for r in runs]
        out[f] = {'median': statistics.median(v), 'min': min(v),
                  'max': max(v)}
    return out


def table(res):
    hdr = ('senders', 'cc', 'util', 'util / cc=off util', 'goodput util',
           'drops', 'retransmits', 'Jain (1 s)', 'q p99')
    print('| ' + ' | '.join(hdr) + ' |')
    print('|' + '---|' * len(hdr))
    for row in res:
        s = row['summary']

        def f(k, fmt):
            m = s[k]
            return (fmt % m['median']) + ' (' + (fmt % m['min']) + '..' + \
                (fmt % m['max']) + ')'
        print('| %d | %s | %s | %s | %s | %s | %s | %s | %s |' % (
            row['senders'], row['cc'], f('util', '%.2f'),
            f('util_vs_off', '%.2f'),
            f('goodput_util', '%.2f'), f('drops', '%d'),
            f('retransmits', '%d'), f('jain_mean', '%.3f'),
            f('q_p99', '%d')))


def smooth(v, k):
    return [sum(v[i:i + k]) / len(v[i:i + k]) for i in range(0, len(v), k)]


def plot(path, off, dcqcn, max_th):
    """Two columns (off, dcqcn): senders' goodput on top, queue below."""
    k = 10          # 10 ms slots -> 100 ms points
    g = ['set terminal pngcairo size 1200,700 font ",10"',
         'set output "%s"' % path, 'set multiplot layout 2,2',
         'set grid', 'set key off']
    data = []
    for name, run in (('off', off), ('dcqcn', dcqcn)):
        ser = run['series']
        slot = ser['slot_ms'] * k / 1000.0
        for i, snd in enumerate(ser['sender_mbps']):
            data.append('$r_%s_%d << EOD' % (name, i))
            data += ['%.2f %.2f' % (j * slot, v)
                     for j, v in enumerate(smooth(snd, k))]
            data.append('EOD')
        data.append('$q_%s << EOD' % name)
        data += ['%.3f %.2f' % (j * ser['slot_ms'] / 1000.0, v)
                 for j, v in enumerate(ser['queue'])]
        data.append('EOD')
    cmds = []
    for name, run in (('off', off), ('dcqcn', dcqcn)):
        n = len(run['series']['sender_mbps'])
        cmds += ['set title "cc = %s: goodput of each of %d senders (Mbit/s, '
                 '100 ms)"' % (name, n),
                 'set yrange [0:*]', 'set xlabel "s"',
                 'plot ' + ', '.join('$r_%s_%d using 1:2 with lines lw 1.5'
                                     % (name, i) for i in range(n))]
    for name, run in (('off', off), ('dcqcn', dcqcn)):
        cmds += ['set title "cc = %s: bottleneck queue (frames, 10 ms mean; '
                 'marking from %d to %d, %d held)"' % (
                     name, run['min_th'], run['max_th'], run['qcap']),
                 'set yrange [0:%d]' % (run['qcap'] * 1.05),
                 'plot $q_%s using 1:2 with lines lc "black", %d with lines '
                 'dt 2 lc "red"' % (name, max_th)]
    # gnuplot lays out 2x2 row by row: goodput (off, dcqcn), queue (off, dcqcn)
    script = '\n'.join(g + data + cmds + ['unset multiplot']) + '\n'
    subprocess.run(['gnuplot'], input=script, text=True, check=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--build', default='build')
    ap.add_argument('--rounds', type=int, default=3)
    ap.add_argument('--senders', default='2,4,8')
    ap.add_argument('--duration', type=float, default=5)
    ap.add_argument('--warmup', type=float, default=1)
    ap.add_argument('--dcqcn-set', action='append', default=[],
                    help='KEY=VALUE for the cc = dcqcn runs')
    ap.add_argument('--json')
    ap.add_argument('--plot')
    args, extra = ap.parse_known_args()
    extra = [e for e in extra if e != '--']
    prog = os.path.join(args.build, 'bench', 'uroce-incast')
    res = []
    for n in [int(x) for x in args.senders.split(',')]:
        runs = {'off': [], 'dcqcn': []}
        for rnd in range(args.rounds):
            for cc in ('off', 'dcqcn'):
                r = run_one(prog, n, cc, args, extra)
                runs[cc].append(r)
                print('senders %d round %d cc %-5s util %.2f goodput util '
                      '%.2f drops %d retransmits %d Jain %.3f q p99 %d '
                      '(switch away %.0f%%)' % (
                          n, rnd, cc, r['util'], r['goodput_util'],
                          r['drops'], r['retransmits'], r['jain_mean'],
                          r['q_p99'], 100 * r['switch_away']),
                      file=sys.stderr, flush=True)
        # The ceiling: what the bottleneck carried in the same round with
        # cc = off (its queue full: busy whenever the host ran it).
        for o, d in zip(runs['off'], runs['dcqcn']):
            o['util_vs_off'] = 1.0
            d['util_vs_off'] = d['util'] / o['util'] if o['util'] else 0
        for cc in ('off', 'dcqcn'):
            res.append({'senders': n, 'cc': cc,
                        'summary': summary(runs[cc]),
                        'rounds': [{k: v for k, v in r.items()
                                    if k != 'series'} for r in runs[cc]]})
        last = (runs['off'][-1], runs['dcqcn'][-1])
    table(res)
    if args.json:
        with open(args.json, 'w') as f:
            json.dump({'dcqcn_set': args.dcqcn_set, 'extra': extra,
                       'results': res, 'plotted': list(last)}, f, indent=1)
    if args.plot:
        plot(args.plot, last[0], last[1], last[1]['max_th'])
        print('plot: %s' % args.plot)


if __name__ == '__main__':
    main()
