#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The uroce authors
"""Two cm_peer processes (cm_peer.c) over a memif pair of their own.

    check_cm_peer.py --exe CM_PEER --scenario S [--cycles N --batch B]

The server (memif server, 192.168.77.1) starts first; the client once the
server says READY. Kill scenarios (unreach, rtu, xfer, disc): the side
that is to die must end by SIGKILL after saying where ("DYING point"),
the survivor must print OK (its ids got the events cm_peer.c lists) and
exit 0 once its stdin closes: under ASan that exit is where a leak fails
it. The CM timing is shortened through the configuration's environment
overrides (UROCE_PORT_CM_RESPONSE_TIMEOUT=14, UROCE_PORT_CM_MAX_RETRIES=3:
an unanswered message is given up after 4 sends 0.6 s apart), so the
events come in seconds.

cycles: both sides run N connect / transfer / disconnect cycles, B at a
time; both print OK (every byte checked); the fd count after the last
cycle equals the one after the first thousand and the RSS grew by less
than RSS_GROWTH_KIB between them; then, while both wait, each one's
telemetry must show its CM agent's connection table back to zero (once
the last time-waits ran out) and no QP left (/uroce/qps).

noagent: the server only opens its device; the client's REQ must come
back REJECTED 8 and its SIDR_REQ as UNREACHABLE with status 1; in the
server's telemetry gsi_noagent_replied is 2 and gsi_drop_noagent 0; both
captures decode with tshark with nothing malformed and hold REJ reason 8
(Message REJected: REQ, the REQ's comm ID echoed) and SIDR_REP status 1
answering the client's requests.

Exit 0 pass, 1 fail.
"""

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, '..', 'conformance'))

GUARD = 120          # s: a guard against a hang, not a timing threshold
RSS_GROWTH_KIB = 32 * 1024
KILL = {'unreach': ('client', 'connect_request'),
        'rtu': ('server', 'connect_response'),
        'xfer': ('client', 'xfer'),
        'disc': ('client', 'disconnected')}
CM_TIMING = {'UROCE_PORT_CM_RESPONSE_TIMEOUT': '14',
             'UROCE_PORT_CM_MAX_RETRIES': '3'}


def conf(tmp, side, role, me, peer, prefix, pcap):
    mem = os.environ.get('UROCE_TEST_MEM', '--no-huge -m 256')
    if '--in-memory' in mem:     # a memif server --in-memory crashes its client
        mem = '--no-huge -m 256'
    path = os.path.join(tmp, side + '.conf')
    with open(path, 'w') as f:
        f.write('[port]\n'
                'dev = net_memif0,role=%s,id=0,socket=%s/memif.sock,'
                'socket-abstract=no,mac=02:00:00:00:77:0%d\n'
                'ip = 192.168.77.%d/24\nmtu = 4096\nlink_wait = 0\n'
                '%s'
                '[eal]\nlcores = 1\n'
                'args = %s --file-prefix=%s-%s --log-level=*:warning\n'
                '[neigh]\n192.168.77.%d = 02:00:00:00:77:0%d\n' % (
                    role, tmp, me, me,
                    'pcap = %s\n' % pcap if pcap else '', mem, prefix, side,
                    peer, peer))
    return path


class Proc:
    """A cm_peer process; its stdout lines read as they come."""

    def __init__(self, exe, role, args, cfg, env, tmp):
        self.role = role
        self.out_path = os.path.join(tmp, role + '.out')
        self.err_path = os.path.join(tmp, role + '.err')
        e = dict(os.environ, UROCE_CONFIG=cfg, **env)
        # ASan keeps freed memory in quarantine, 256 MiB by default, which
        # shows as RSS growth over the cycles: a small one (ignored by
        # builds without ASan)
        e['ASAN_OPTIONS'] = ':'.join(
            o for o in (os.environ.get('ASAN_OPTIONS'),
                        'quarantine_size_mb=4') if o)
        self.p = subprocess.Popen([exe, role] + args, env=e,
                                  stdin=subprocess.PIPE,
                                  stdout=open(self.out_path, 'w'),
                                  stderr=open(self.err_path, 'w'))

    def lines(self):
        with open(self.out_path) as f:
            return f.read().splitlines()

    def wait_line(self, prefixes, deadline):
        """The first line starting with one of @prefixes, or None when
        the process ended or the deadline passed first."""
        while time.monotonic() < deadline:
            for ln in self.lines():
                if ln.startswith(prefixes):
                    return ln
            if self.p.poll() is not None:
                for ln in self.lines():
                    if ln.startswith(prefixes):
                        return ln
                return None
            time.sleep(0.05)
        return None

    def finish(self, deadline):
        """Close stdin, wait; the exit status (None: killed by us)."""
        try:
            self.p.stdin.close()
        except OSError:
            pass
        try:
            return self.p.wait(max(1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()
            return None

    def show(self):
        print('--- %s stdout' % self.role)
        print('\n'.join(self.lines()))
        print('--- %s stderr' % self.role)
        with open(self.err_path) as f:
            print(f.read()[-4000:])


class Tel:
    """A client of a DPDK telemetry v2 socket."""

    def __init__(self, path):
        self.s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.s.connect(path)
        self.max = json.loads(self.s.recv(1024).decode())['max_output_len']

    def q(self, cmd):
        self.s.send(cmd.encode())
        return json.loads(self.s.recv(self.max).decode())[cmd.split(',')[0]]

    def close(self):
        self.s.close()


def tel_of(prefix, side):
    return Tel('/var/run/dpdk/%s-%s/dpdk_telemetry.v2' % (prefix, side))


class Checks:
    def __init__(self):
        self.bad = 0

    def __call__(self, ok, what):
        print('%s: %s' % ('ok' if ok else 'FAIL', what))
        self.bad += not ok
        return ok


def run_kill(a, exe, tmp, cfg, prefix, c):
    survivor, point = KILL[a.scenario]
    server = Proc(exe, 'server', [a.scenario], cfg['a'], CM_TIMING, tmp)
    procs = [server]
    t0 = time.monotonic()
    deadline = t0 + GUARD
    try:
        if not c(server.wait_line(('READY',), deadline) is not None,
                 'the server listens'):
            return
        client = Proc(exe, 'client', [a.scenario], cfg['b'], CM_TIMING, tmp)
        procs.append(client)
        s, d = (client, server) if survivor == 'client' else (server, client)
        line = s.wait_line(('OK', 'FAIL'), deadline)
        c(line == 'OK', 'the %s (survivor) got its events: %s' % (
            s.role, line))
        c(d.wait_line(('DYING',), deadline) == 'DYING ' + point,
          'the %s died at %s' % (d.role, point))
        rc = d.finish(deadline)
        c(rc == -signal.SIGKILL, 'the %s ended by SIGKILL (%s)' % (
            d.role, rc))
        rc = s.finish(deadline)
        c(rc == 0, 'the %s exited 0 (%s)' % (s.role, rc))
        print('survivor events: ' + ', '.join(
            ln[6:] for ln in s.lines() if ln.startswith('EVENT')))
        print('duration %.1f s' % (time.monotonic() - t0))
    finally:
        reap(procs, c)


def reap(procs, c):
    """Kill what still runs; show every output after a failed check."""
    for p in procs:
        if p.p.poll() is None:
            p.p.kill()
            p.p.wait()
    if c.bad:
        for p in procs:
            p.show()


def agent_idle(t):
    cm = t.q('/uroce/cm')
    qps = t.q('/uroce/qps')
    conns = sum(d.get('conns', 0) for d in cm.values())
    return conns, [q for dev in qps.values() for q in dev]


def run_cycles(a, exe, tmp, cfg, prefix, c):
    args = ['cycles', str(a.cycles), str(a.batch)]
    server = Proc(exe, 'server', args, cfg['a'], {}, tmp)
    procs = [server]
    t0 = time.monotonic()
    deadline = t0 + a.guard
    try:
        if not c(server.wait_line(('READY',), deadline) is not None,
                 'the server listens'):
            return
        client = Proc(exe, 'client', args, cfg['b'], {}, tmp)
        procs.append(client)
        for p in (client, server):
            line = p.wait_line(('OK', 'FAIL'), deadline)
            c(line == 'OK', '%s: %d cycles, every byte checked (%s)' % (
                p.role, a.cycles, line))
        dur = time.monotonic() - t0
        for p in (client, server):
            v = {ln.split()[0]: ln.split()[1:] for ln in p.lines()
                 if ln.startswith(('FDS', 'RSS', 'DONE'))}
            fds = [int(x) for x in v.get('FDS', ['-1', '-2'])]
            rss = [int(x) for x in v.get('RSS', ['-1', '-1'])]
            c(fds[0] > 0 and fds[0] == fds[1],
              '%s: fds after the first thousand %d, after the last %d' % (
                  p.role, fds[0], fds[1]))
            c(rss[0] > 0 and rss[1] - rss[0] < RSS_GROWTH_KIB,
              '%s: RSS after the first thousand %d KiB, after the last %d '
              'KiB (growth under %d)' % (p.role, rss[0], rss[1],
                                         RSS_GROWTH_KIB))
        # the agents' tables empty once the time-waits ran out
        for side, p in (('a', server), ('b', client)):
            t = tel_of(prefix, side)
            try:
                conns, qps = agent_idle(t)
                while conns and time.monotonic() < deadline:
                    time.sleep(0.1)
                    conns, qps = agent_idle(t)
                c(conns == 0, '%s: CM agent connections now %d' % (
                    p.role, conns))
                c(not qps, '%s: QPs left: %s' % (p.role, qps))
                print('%s CM counters: %s' % (p.role, json.dumps(
                    t.q('/uroce/cm'))))
            finally:
                t.close()
        for p in (client, server):
            c(p.finish(deadline) == 0, '%s exited 0' % p.role)
        print('duration %.1f s (%d cycles, %d at a time; %.0f a second)' % (
            dur, a.cycles, a.batch, a.cycles / dur))
    finally:
        reap(procs, c)


def capture_problems(path):
    """check_capture.check()'s result (tshark, and the ICRCs with scapy),
    or tshark's alone where scapy is missing."""
    try:
        import check_capture as cc
    except SystemExit:          # no scapy: it exits 77 on import
        cc = None
    if cc is None:
        import check_rdmacm
        print('scapy missing: tshark alone, ICRCs not checked')
        return check_rdmacm.tshark_only(path)
    r = cc.check(path)
    print(cc.summary(path, r))
    return r


def cm_mads(path):
    """[(attribute ID, MAD bytes)] of the CM MADs in a capture: tshark
    names the MADs (class 0x07) and gives the UDP payload, whose MAD
    follows the BTH (12 bytes) and DETH (8)."""
    sys.path.insert(0, os.path.join(HERE, '..', 'wire'))
    from crosscheck_tshark import PREFS
    cmd = ['tshark', '-r', path, '-n', '-T', 'fields', '-E', 'occurrence=f',
           '-e', 'infiniband.mad.mgmtclass', '-e', 'udp.payload']
    for p in PREFS:
        cmd += ['-o', p]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    mads = []
    for line in out.stdout.splitlines():
        cls, payload = (line.split('\t') + [''])[:2]
        if cls and int(cls, 0) == 0x07 and payload:
            mad = bytes.fromhex(payload.replace(':', ''))[20:20 + 256]
            mads.append((int.from_bytes(mad[16:18], 'big'), mad))
    return mads


def u32(mad, off):
    return int.from_bytes(mad[off:off + 4], 'big')


def check_noagent_capture(path, c):
    """The REJ answers the REQ (IBTA 12.6.7: its Remote Communication ID
    the REQ's Local one, Message REJected 0 = REQ, Reason 8) in the REQ's
    transaction; the SIDR_REP the SIDR_REQ (12.6.11: its Request ID,
    Status 1)."""
    r = capture_problems(path)
    c(not r['problems'], 'capture %s decodes with nothing malformed: %s' % (
        os.path.basename(path), r['problems'][:5]))
    mads = cm_mads(path)
    by = lambda a: [m for i, m in mads if i == a]  # noqa: E731
    req, rej, sreq, srep = by(0x10), by(0x12), by(0x17), by(0x18)
    if not c(len(req) == 1 and len(rej) == 1 and len(sreq) == 1 and
             len(srep) == 1, '%s: one REQ, REJ, SIDR_REQ, SIDR_REP each '
             '(%d, %d, %d, %d)' % (os.path.basename(path), len(req),
                                   len(rej), len(sreq), len(srep))):
        return
    q, j = req[0], rej[0]
    c(j[8:16] == q[8:16] and u32(j, 24) == 0 and u32(j, 28) == u32(q, 24)
      and j[32] >> 6 == 0 and int.from_bytes(j[34:36], 'big') == 8,
      'REJ: TID %s, comm IDs %#x %#x (REQ %#x), Message REJected %d, '
      'reason %d' % (j[8:16].hex(), u32(j, 24), u32(j, 28), u32(q, 24),
                     j[32] >> 6, int.from_bytes(j[34:36], 'big')))
    q, j = sreq[0], srep[0]
    c(j[8:16] == q[8:16] and u32(j, 24) == u32(q, 24) and j[28] == 1 and
      j[36:44] == q[32:40],
      'SIDR_REP: TID %s, request ID %#x (SIDR_REQ %#x), status %d, '
      'service ID %s (%s)' % (j[8:16].hex(), u32(j, 24), u32(q, 24), j[28],
                              j[36:44].hex(), q[32:40].hex()))


def run_noagent(a, exe, tmp, cfg, prefix, c):
    server = Proc(exe, 'server', ['noagent'], cfg['a'], {}, tmp)
    procs = [server]
    t0 = time.monotonic()
    deadline = t0 + GUARD
    try:
        if not c(server.wait_line(('READY',), deadline) is not None,
                 'the server opened its device'):
            return
        client = Proc(exe, 'client', ['noagent'], cfg['b'], CM_TIMING, tmp)
        procs.append(client)
        line = client.wait_line(('OK', 'FAIL'), deadline)
        c(line == 'OK', 'the client got REJECTED 8 and UNREACHABLE 1: %s'
          % line)
        print('client events: ' + ', '.join(
            ln[6:] for ln in client.lines() if ln.startswith('EVENT')))
        t = tel_of(prefix, 'a')
        try:
            dev = t.q('/uroce/ports').get('uroce0', {})
        finally:
            t.close()
        c(dev.get('gsi_noagent_replied') == 2 and
          dev.get('gsi_drop_noagent') == 0,
          'server: gsi_noagent_replied %s, gsi_drop_noagent %s' % (
              dev.get('gsi_noagent_replied'), dev.get('gsi_drop_noagent')))
        for p in (client, server):
            c(p.finish(deadline) == 0, '%s exited 0' % p.role)
        print('duration %.1f s' % (time.monotonic() - t0))
        if shutil.which('tshark') is not None:
            for side in 'ab':
                check_noagent_capture(os.path.join(tmp, side + '.pcapng'), c)
        else:
            print('tshark missing: captures not checked')
    finally:
        reap(procs, c)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--exe', required=True)
    ap.add_argument('--scenario', required=True,
                    choices=sorted(KILL) + ['cycles', 'noagent'])
    ap.add_argument('--cycles', type=int, default=10000)
    ap.add_argument('--batch', type=int, default=100)
    ap.add_argument('--guard', type=int, default=600)
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix='uroce-cmpeer.')
    prefix = 'uroce-cmpeer-%d' % os.getpid()
    pcap = a.scenario == 'noagent'
    cfg = {'a': conf(tmp, 'a', 'server', 1, 2, prefix,
                     pcap and os.path.join(tmp, 'a.pcapng')),
           'b': conf(tmp, 'b', 'client', 2, 1, prefix,
                     pcap and os.path.join(tmp, 'b.pcapng'))}
    c = Checks()
    try:
        {'cycles': run_cycles, 'noagent': run_noagent}.get(
            a.scenario, run_kill)(a, a.exe, tmp, cfg, prefix, c)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        for side in 'ab':
            shutil.rmtree('/var/run/dpdk/%s-%s' % (prefix, side),
                          ignore_errors=True)
    print('%s: %s' % (a.scenario, 'FAIL' if c.bad else 'pass'))
    return 1 if c.bad else 0


if __name__ == '__main__':
    sys.exit(main())
