#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The uroce authors
"""DPDK telemetry of an unmodified verbs program under uroce-run.

An ibv_rc_pingpong pair on the memif link (run_pair.py's set-up: its own
memif socket and EAL file prefixes). The server's telemetry socket,
/var/run/dpdk/<prefix>/dpdk_telemetry.v2, is queried as dpdk-telemetry.py
does (unix seqpacket, JSON):
  - while the server waits for its client: /uroce/info names uroce0,
    /uroce/qps lists one QP, /uroce/qp,<qpn> says RC and INIT;
  - while the pair runs: the QP is RTS, its packet counters move between
    two answers, and /uroce/ports agrees (the port received at least
    what the QP did);
  - dpdk-telemetry.py -f <prefix> itself (dpdk-dev), when installed,
    answers /uroce/qps with the same QPN (asked while the server waits);
  - /uroce/info's engine_lcores is 0 under inline progress
    (UROCE_EAL_LCORES=0 in the environment) and not 0 without it.
Exit 77 (skip) without ibv_rc_pingpong.
"""

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run_pair  # noqa: E402

SKIP = 77
PORT = 18590


class Tel:
    """A client of a DPDK telemetry v2 socket."""

    def __init__(self, path):
        self.s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.s.connect(path)
        hello = json.loads(self.s.recv(1024).decode())
        self.max = hello['max_output_len']
        self.pid = hello['pid']

    def q(self, cmd):
        self.s.send(cmd.encode())
        return json.loads(self.s.recv(self.max).decode())[cmd.split(',')[0]]

    def close(self):
        self.s.close()


def wait_for(what, deadline, step=0.05):
    while time.monotonic() < deadline:
        v = what()
        if v:
            return v
        time.sleep(step)
    return None


class Checks:
    def __init__(self):
        self.failed = 0

    def check(self, ok, what):
        print('%s %s' % ('ok  ' if ok else 'FAIL', what))
        if not ok:
            self.failed += 1
        return ok


def telemetry_while_running(a, pair, srv, c):
    sock = os.path.join('/var/run/dpdk', pair.prefix['a'],
                        'dpdk_telemetry.v2')
    deadline = time.monotonic() + a.timeout
    if not c.check(wait_for(lambda: run_pair.listening(PORT), deadline),
                   'server listens'):
        return
    c.check(os.path.exists(sock), 'socket at ' + sock)
    t = Tel(sock)
    c.check(t.pid == srv.pid, 'the socket is the server\'s (pid)')
    info = t.q('/uroce/info')
    c.check(info['devices'] == ['uroce0'], '/uroce/info: %s' % info)
    # The progress mode the test runs in (<name>_inline: UROCE_EAL_LCORES
    # = 0) is the server's: no engine lcore inline, one or more else.
    inline = os.environ.get('UROCE_EAL_LCORES') == '0'
    c.check((info.get('engine_lcores') == 0) == inline,
            'progress mode %s: engine_lcores %s' %
            ('inline' if inline else 'engine lcore',
             info.get('engine_lcores')))
    qps = t.q('/uroce/qps')['uroce0']
    c.check(len(qps) == 1, '/uroce/qps: %s' % qps)
    qpn = qps[0]
    qp = t.q('/uroce/qp,%d' % qpn)
    c.check(qp['type'] == 'RC' and qp['state'] == 'INIT' and
            qp['qpn'] == qpn, 'QP 0x%x before the client: %s %s' %
            (qpn, qp['type'], qp['state']))

    # dpdk-telemetry.py itself, while the server waits (it is alive for
    # sure, and nothing else changes its QP list)
    tool = shutil.which('dpdk-telemetry.py')
    if tool:
        out = subprocess.run([tool, '-f', pair.prefix['a']],
                             input='/uroce/qps\n', capture_output=True,
                             text=True, timeout=30).stdout
        lines = [json.loads(ln) for ln in out.splitlines()
                 if ln.startswith('{')]
        c.check(any(ln.get('/uroce/qps', {}).get('uroce0') == [qpn]
                    for ln in lines), 'dpdk-telemetry.py -f %s: %s' %
                (pair.prefix['a'], out.strip()))
    else:
        print('SKIP dpdk-telemetry.py not installed (dpdk-dev)')

    cli, cout = pair.start('b', 'ibv_rc_pingpong', [
        '-g', '0', '-d', 'uroce0', '-s', '4096', '-n', str(a.iters),
        '-p', str(PORT), '127.0.0.1'])
    try:
        first = wait_for(lambda: (lambda q: q if q['state'] == 'RTS' and
                                  q['rx_pkts'] > 0 else None)(
                                      t.q('/uroce/qp,%d' % qpn)), deadline,
                         0.01)
        if c.check(first is not None, 'QP reaches RTS and receives'):
            later = wait_for(lambda: (lambda q: q if q['rx_pkts'] >
                                      first['rx_pkts'] else None)(
                                          t.q('/uroce/qp,%d' % qpn)),
                             deadline, 0.01)
            c.check(later is not None and later['tx_pkts'] >=
                    first['tx_pkts'], 'counters move while it runs: rx '
                    '%d -> %s' % (first['rx_pkts'],
                                  later and later['rx_pkts']))
            port = t.q('/uroce/ports')['uroce0']
            c.check(port['rx_pkts'] >= first['rx_pkts'] and
                    port['qp_rx_pkts'] >= first['rx_pkts'] and
                    port['qps'] == 1,
                    '/uroce/ports: rx_pkts %d, qp_rx_pkts %d' %
                    (port['rx_pkts'], port['qp_rx_pkts']))
    finally:
        t.close()
        crc = run_pair.finish(cli, deadline)
        c.check(crc == 0, 'client exit %s' % crc)
        if crc != 0:
            print(run_pair.output(cout))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--run', required=True, help='the uroce-run executable')
    ap.add_argument('--conf-a', required=True)
    ap.add_argument('--conf-b', required=True)
    ap.add_argument('--iters', type=int, default=20000)
    ap.add_argument('--timeout', type=float, default=60)
    a = ap.parse_args()
    a.run = os.path.abspath(a.run)
    a.conf_a = os.path.abspath(a.conf_a)
    a.conf_b = os.path.abspath(a.conf_b)
    a.fault = None
    a.capture_dir = None    # run_pair.Pair: no capture here
    if shutil.which('ibv_rc_pingpong') is None:
        print('SKIP: ibv_rc_pingpong not installed (ibverbs-utils)')
        return SKIP
    c = Checks()
    pair = run_pair.Pair(a, 'tel%d' % os.getpid(), None)
    srv, sout = pair.start('a', 'ibv_rc_pingpong', [
        '-g', '0', '-d', 'uroce0', '-s', '4096', '-n', str(a.iters),
        '-p', str(PORT)])
    try:
        telemetry_while_running(a, pair, srv, c)
        src = run_pair.finish(srv, time.monotonic() + a.timeout)
        c.check(src == 0, 'server exit %s' % src)
        if src != 0:
            print(run_pair.output(sout))
    finally:
        if srv.poll() is None:
            os.kill(srv.pid, 9)
            srv.wait()
        pair.cleanup()
    print('%d failed' % c.failed)
    return 1 if c.failed else 0


if __name__ == '__main__':
    sys.exit(main())
