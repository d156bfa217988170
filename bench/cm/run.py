#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The uroce authors
"""Connection setup rate of uroce's RDMA CM: rdma-core's cmtime, two
processes over the sample memif pair (config/memif-{a,b}.conf) under
uroce-run, CONNS connections at once (RC, the server on the wildcard).

A figure a round, ROUNDS rounds:
 - cmtime's steps (total ms of the client's 'resolve addr', 'create qp',
   'connect', ...; 'connect' runs from the first rdma_connect() to the
   last ESTABLISHED on the client);
 - connections a second: CONNS over the client's 'connect' step;
 - the ceiling of the round: the kernel's TCP over loopback, CONNS
   connect()s at once to a listener (SYN to accept()), on the same host,
   taken in the same round; the two take turns to go first.
The summary gives each figure's median and min..max over the rounds.
Then one round more with the server's port captured: the server's span,
from the pcapng timestamps, from the first REQ received to the last RTU
received (its last ESTABLISHED), beside the client's 'connect' of the
same run: how much later than the client the server is done (REQ to
ESTABLISHED on both sides). The capture slows both sides, so the rate
comes from the rounds without it.
Then what one setup is made of: PARTS single connections (cmtime -c 1)
with both ports captured, the time between the CM messages on the two
ports (one clock, the host's): REQ on the wire, the server's work from
REQ to REP, REP on the wire, the client's from REP to RTU, RTU on the
wire; medians and min..max.
Then, once, HOLD connections at once (cmtime -c HOLD: every one
established before the first is disconnected): how many connected, and
the memory a connection costs each process: its peak resident set
(VmHWM) with HOLD connections less that with CONNS (median of the
rounds), over HOLD - CONNS.

    bench/cm/run.py [BUILD_DIR] [OUT_DIR]
Environment: CM_ROUNDS (default 5), CM_CONNS (1000), CM_PARTS (5, 0:
skip), CM_HOLD (10000, 0: skip). Run it alone (it starts busy engines). JSON to OUT_DIR/cm.json.
"""

import json
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.abspath(os.path.join(HERE, '..', '..'))
sys.path.insert(0, os.path.join(SRC, 'test', 'conformance'))
from check_rdmacm import (cmtime_steps, check_cmtime,  # noqa: E402
                          SERVER_IP, CLIENT_IP, MAC)

STEPS = ('resolve addr', 'resolve route', 'create qp', 'connect',
         'disconnect')


def side_env(side, tag, pcap=None):
    e = dict(os.environ)
    role = 'server' if side == 'a' else 'client'
    e['UROCE_PORT_DEV'] = ('net_memif0,role=%s,id=0,socket=/run/uroce/'
                           'cmb-%s.sock,mac=%s' % (role, tag, MAC[side]))
    if side == 'a':
        e['UROCE_PORT_LINK_WAIT'] = '0'
    e['UROCE_EAL_ARGS'] = ('--no-pci --no-huge -m 512 --file-prefix=cmb-%s-%s'
                           ' --log-level=*:warning' % (side, tag))
    e.pop('UROCE_PORT_PCAP', None)
    if pcap:
        e['UROCE_PORT_PCAP'] = pcap
    return e


def server_span(pcap):
    """(first REQ received, last RTU received) in the server's capture,
    seconds, and how many of each."""
    out = subprocess.run(['tshark', '-r', pcap, '-n', '-T', 'fields', '-E',
                          'occurrence=f', '-e', 'frame.time_epoch', '-e',
                          'infiniband.mad.attributeid'],
                         capture_output=True, text=True, timeout=600).stdout
    req, rtu = [], []
    for line in out.splitlines():
        t, attr = (line.split('\t') + [''])[:2]
        if attr and int(attr, 0) == 0x10:
            req.append(float(t))
        elif attr and int(attr, 0) == 0x14:
            rtu.append(float(t))
    if not req or not rtu:
        return None, len(req), len(rtu)
    return max(rtu) - min(req), len(req), len(rtu)


def cm_times(pcap):
    """{CM message: [pcapng timestamps, s]} of a capture."""
    out = subprocess.run(['tshark', '-r', pcap, '-n', '-T', 'fields', '-E',
                          'occurrence=f', '-e', 'frame.time_epoch', '-e',
                          'infiniband.mad.attributeid'],
                         capture_output=True, text=True, timeout=600).stdout
    names = {0x10: 'REQ', 0x13: 'REP', 0x14: 'RTU'}
    t = {}
    for line in out.splitlines():
        ts, attr = (line.split('\t') + [''])[:2]
        if attr and int(attr, 0) in names:
            t.setdefault(names[int(attr, 0)], []).append(float(ts))
    return t


# One setup's parts from the captures of both sides (one clock: the
# host's): (name, side of the start, message, side of the end, message).
PARTS = (('REQ: client port to server port', 'b', 'REQ', 'a', 'REQ'),
         ('server: REQ in to REP out (event, create QP, INIT/RTR/RTS, REP)',
          'a', 'REQ', 'a', 'REP'),
         ('REP: server port to client port', 'a', 'REP', 'b', 'REP'),
         ('client: REP in to RTU out (RTR, RTS, RTU)', 'b', 'REP', 'b', 'RTU'),
         ('RTU: client port to server port', 'b', 'RTU', 'a', 'RTU'))


def setup_parts(a, tag):
    """One connection (cmtime -c 1), both ports captured: {part: us},
    and cmtime's 'connect' step in us."""
    r = cmtime_pair(a, tag, 1, True, both=True)
    t = {s: cm_times(os.path.join(a.out, '%s-%s.pcapng' % (tag, s)))
         for s in 'ab'}
    for s in 'ab':
        os.unlink(os.path.join(a.out, '%s-%s.pcapng' % (tag, s)))
    parts = {}
    for name, s0, m0, s1, m1 in PARTS:
        if t[s0].get(m0) and t[s1].get(m1):
            parts[name] = (t[s1][m1][0] - t[s0][m0][0]) * 1e6
    c = r['steps_ms'].get('connect')
    return parts, c * 1000 if c and not r['problems'] else None


def cmtime_pair(a, tag, conns, capture, both=False):
    """One cmtime pair: its client's steps and output, the server's span
    (@capture; @both: the client's port captured too, files kept)."""
    pcap = os.path.join(a.out, '%s-a.pcapng' % tag) if capture else None
    conf = os.path.join(SRC, 'config')
    with open(os.path.join(a.out, tag + '.server.log'), 'w') as so:
        srv = subprocess.Popen([a.run, '-c', os.path.join(conf, 'memif-a.conf'),
                                '--', 'cmtime'], env=side_env('a', tag, pcap),
                               stdout=so, stderr=subprocess.STDOUT,
                               stdin=subprocess.DEVNULL)
        try:
            time.sleep(1.5)
            cli = subprocess.Popen([a.run, '-c', os.path.join(conf,
                                                             'memif-b.conf'),
                                    '--', 'cmtime', '-b', CLIENT_IP, '-s',
                                    SERVER_IP, '-c', str(conns)],
                                   env=side_env('b', tag, os.path.join(
                                       a.out, '%s-b.pcapng' % tag)
                                       if both else None),
                                   stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True)
            peak = {'a': Peak(srv.pid), 'b': Peak(cli.pid)}
            try:
                out, err = cli.communicate(timeout=600)
            except subprocess.TimeoutExpired:
                cli.kill()
                out, err = cli.communicate()
            alive = srv.poll() is None
            for w in peak.values():
                w.stop()
        finally:
            srv.terminate()
            try:
                srv.wait(10)
            except subprocess.TimeoutExpired:
                srv.kill()
                srv.wait()
    for s in 'ab':
        shutil.rmtree('/var/run/dpdk/cmb-%s-%s' % (s, tag), ignore_errors=True)
    co = out + err
    with open(os.path.join(a.out, tag + '.log'), 'w') as f:
        f.write(co)
    with open(os.path.join(a.out, tag + '.server.log')) as f:
        so_text = f.read()
    probs = check_cmtime(co, so_text, conns)
    if cli.returncode != 0 or not alive:
        probs.append('client rc %d, server %s' % (
            cli.returncode, 'running' if alive else 'gone'))
    r = {'steps_ms': {s: v[0] for s, v in cmtime_steps(co).items()},
         'problems': probs,
         'peak_rss_kib': {s: w.kib for s, w in peak.items()}}
    if pcap and not both:
        span, nreq, nrtu = server_span(pcap)
        r.update(server_span_ms=span * 1000 if span else None,
                 server_req=nreq, server_rtu=nrtu)
        os.unlink(pcap)
    return r


class Peak:
    """The peak resident set (VmHWM, KiB) of a running process, read every
    50 ms until stop(): the last reading, as the process ends, is its
    peak with every connection it held."""

    def __init__(self, pid):
        self.pid, self.kib, self.done = pid, None, threading.Event()
        self.th = threading.Thread(target=self.run)
        self.th.start()

    def run(self):
        while not self.done.is_set():
            try:
                with open('/proc/%d/status' % self.pid) as f:
                    for line in f:
                        if line.startswith('VmHWM:'):
                            self.kib = int(line.split()[1])
            except OSError:
                return
            self.done.wait(0.05)

    def stop(self):
        self.done.set()
        self.th.join()


def tcp_ceiling(conns):
    """ms from the first connect() to the last accept() of @conns TCP
    connections at once over the kernel's loopback."""
    ls = socket.socket()
    ls.bind(('127.0.0.1', 0))
    ls.listen(conns)
    acc = []

    def accept():
        for _ in range(conns):
            acc.append(ls.accept()[0])
    th = threading.Thread(target=accept)
    th.start()
    t0 = time.monotonic()
    cs = []
    for _ in range(conns):
        s = socket.socket()
        s.connect(ls.getsockname())
        cs.append(s)
    th.join()
    ms = (time.monotonic() - t0) * 1000
    for s in cs + acc + [ls]:
        s.close()
    return ms


def summary(vals):
    vals = [v for v in vals if v is not None]
    if not vals:
        return None
    return {'median': statistics.median(vals), 'min': min(vals),
            'max': max(vals), 'n': len(vals)}


def main():
    class A:
        pass
    a = A()
    build = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                            os.path.join(SRC, 'build'))
    a.out = os.path.abspath(sys.argv[2] if len(sys.argv) > 2 else
                            os.path.join(build, 'bench', 'cm'))
    a.run = os.path.join(build, 'app', 'run', 'uroce-run')
    rounds = int(os.environ.get('CM_ROUNDS', '5'))
    conns = int(os.environ.get('CM_CONNS', '1000'))
    hold = int(os.environ.get('CM_HOLD', '10000'))
    parts_n = int(os.environ.get('CM_PARTS', '5'))
    for tool in ('cmtime', 'tshark'):
        if shutil.which(tool) is None:
            print('run.py: %s is not installed' % tool)
            return 77
    if not os.access(a.run, os.X_OK):
        print('run.py: no %s (build first)' % a.run)
        return 2
    os.makedirs(a.out, exist_ok=True)
    res = {'conns': conns, 'rounds': []}
    for r in range(rounds):
        one = {}
        order = ('uroce', 'tcp') if r % 2 == 0 else ('tcp', 'uroce')
        for what in order:
            if what == 'tcp':
                one['tcp_ms'] = tcp_ceiling(conns)
            else:
                one.update(cmtime_pair(a, 'r%d' % r, conns, False))
        c = one['steps_ms'].get('connect')
        one['span_ms'] = c
        one['conn_per_s'] = conns / one['span_ms'] * 1000 \
            if one['span_ms'] and not one['problems'] else None
        one['tcp_conn_per_s'] = conns / one['tcp_ms'] * 1000
        one['ratio'] = one['conn_per_s'] / one['tcp_conn_per_s'] \
            if one['conn_per_s'] else None
        print('round %d: %s conn/s (client connect %s ms), TCP loopback '
              '%.0f conn/s%s' % (
                  r + 1, '%.0f' % one['conn_per_s'] if one['conn_per_s']
                  else '-', c, one['tcp_conn_per_s'],
                  '; ' + '; '.join(one['problems'][:3])
                  if one['problems'] else ''), flush=True)
        res['rounds'].append(one)
    rs = res['rounds']
    res['summary'] = {
        'conn_per_s': summary([x['conn_per_s'] for x in rs]),
        'tcp_conn_per_s': summary([x['tcp_conn_per_s'] for x in rs]),
        'ratio_to_tcp': summary([x['ratio'] for x in rs]),
        'steps_ms': {s: summary([x['steps_ms'].get(s) for x in rs])
                     for s in STEPS},
    }
    # the server's side, once, captured (the capture slows both sides)
    cap = cmtime_pair(a, 'captured', conns, True)
    c = cap['steps_ms'].get('connect')
    res['captured'] = {k: cap.get(k) for k in (
        'server_span_ms', 'server_req', 'server_rtu', 'problems')}
    res['captured']['client_connect_ms'] = c
    res['captured']['server_after_client_ms'] = \
        cap['server_span_ms'] - c if c and cap['server_span_ms'] else None
    # what one setup is made of: PARTS_N single connections, captured
    res['parts_us'] = {}
    conn_us = []
    for i in range(parts_n):
        p, c = setup_parts(a, 'part%d' % i)
        conn_us.append(c)
        for k, v in p.items():
            res['parts_us'].setdefault(k, []).append(v)
    res['parts_us'] = {k: summary(v) for k, v in res['parts_us'].items()}
    res['one_connect_us'] = summary(conn_us)
    if hold:
        h = cmtime_pair(a, 'hold', hold, False)
        c = h['steps_ms'].get('connect')
        res['hold'] = {'conns': hold, 'ok': not h['problems'],
                       'problems': h['problems'][:10],
                       'steps_ms': h['steps_ms'],
                       'conn_per_s': hold / c * 1000 if c and
                       not h['problems'] else None,
                       'peak_rss_kib': h['peak_rss_kib']}
        # what a connection costs each side: the peak resident set with
        # HOLD connections over that of the rounds' CONNS (median)
        res['hold']['kib_per_conn'] = per = {}
        for s in 'ab':
            base = summary([x['peak_rss_kib'].get(s) for x in rs])
            top = h['peak_rss_kib'].get(s)
            per[s] = (top - base['median']) / (hold - conns) \
                if base and top and hold > conns else None
    with open(os.path.join(a.out, 'cm.json'), 'w') as f:
        json.dump(res, f, indent=1)
    sm = res['summary']

    def fmt(x, f='%.0f'):
        return '-' if x is None else '%s (%s..%s)' % (
            f % x['median'], f % x['min'], f % x['max'])
    print('%d connections at once, %d rounds: %s conn/s; TCP loopback %s '
          'conn/s; ratio %s' % (conns, rounds, fmt(sm['conn_per_s']),
                               fmt(sm['tcp_conn_per_s']),
                               fmt(sm['ratio_to_tcp'], '%.3f')))
    print('steps (ms, client): ' + ', '.join(
        '%s %s' % (s, fmt(sm['steps_ms'][s], '%.1f')) for s in STEPS))
    cp = res['captured']
    print('captured round: client connect %s ms, server first REQ to last '
          'RTU %s ms (%s REQ, %s RTU received)' % (
              cp['client_connect_ms'], '%.1f' % cp['server_span_ms']
              if cp['server_span_ms'] else '-', cp['server_req'],
              cp['server_rtu']))
    if parts_n:
        print('one connection alone (%d runs, us): cmtime connect %s' % (
            parts_n, fmt(res['one_connect_us'])))
        for name, _, _, _, _ in PARTS:
            print('  %s: %s' % (name, fmt(res['parts_us'].get(name))))
    if hold:
        print('%d connections held at once: %s%s' % (
            hold, 'all established' if res['hold']['ok'] else 'FAILED',
            ', %.0f conn/s' % res['hold']['conn_per_s']
            if res['hold']['conn_per_s'] else ''))
        pk, per = res['hold']['peak_rss_kib'], res['hold']['kib_per_conn']
        print('  peak resident set: server %s KiB, client %s KiB; a '
              'connection adds %s KiB to the server, %s KiB to the client '
              '(over %d at once)' % (
                  pk.get('a'), pk.get('b'),
                  '%.1f' % per['a'] if per['a'] is not None else '-',
                  '%.1f' % per['b'] if per['b'] is not None else '-', conns))
    print('JSON: %s' % os.path.join(a.out, 'cm.json'))
    return 0


if __name__ == '__main__':
    sys.exit(main())
