#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The uroce authors
"""Unmodified rdma_cm programs, two processes on the memif pair.

Each case runs a server under `uroce-run -c memif-a.conf` (the memif
server, its link_wait 0 so that it listens at once) and then a client
under `uroce-run -c memif-b.conf`, which connects through the RDMA CM to
the server's uroce address (192.168.77.1): address and route resolution,
the CM's REQ/REP/RTU over QP1, the transfer, DREQ/DREP. The client may
reach the server before it listens (its REQ then gets REJ "invalid
service ID" and the tool fails at once): such a client is run again, at
most ATTEMPTS times. Any other failure fails the case.

A case passes when both processes exit 0 and print what the tool prints
after a completed run (rping -V checks every ping's data: a mismatch is
an error exit), and both captures pass: tshark decodes every frame with
nothing malformed (check_capture.check(), which also verifies the ICRCs;
tshark alone when scapy is missing),
each side sent RoCEv2 frames, and each capture holds the CM MADs of a
connection (class 0x07) in both directions: REQ, REP and RTU (SIDR_REQ
and SIDR_REP for udaddy), and a DREQ and DREP for the tools that
disconnect.

cmtime's server serves until it is stopped: it must still be running,
silent, when its client is done. Its client's output is parsed (every
phase announced in order, every step's line with figures that add up, no
error line) and each capture must hold REQ, REP, RTU, DREQ and DREP for
exactly as many distinct connections as the client made (-c).

UROCE_TEST_PRELOAD (sanitizer builds): the runtime our libraries need
inside the uninstrumented tools, preloaded into them (never into
uroce-run).

    check_rdmacm.py --run UROCE_RUN --conf-a A --conf-b B [--group G]...
Exit 0 pass, 1 fail, 77 when no tool is installed.
"""

import argparse
import collections
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

import capture_pool

SKIP = 77
ATTEMPTS = 5
SERVER_IP = '192.168.77.1'
CLIENT_IP = '192.168.77.2'
CMTIME_CONNS = 100
MAC = {'a': '02:00:00:00:77:01', 'b': '02:00:00:00:77:02'}
CM_ATTR = {0x10: 'REQ', 0x11: 'MRA', 0x12: 'REJ', 0x13: 'REP', 0x14: 'RTU',
           0x15: 'DREQ', 0x16: 'DREP', 0x17: 'SIDR_REQ', 0x18: 'SIDR_REP'}
CONNECT = ('REQ', 'REP', 'RTU')
CLOSE = ('DREQ', 'DREP')
SIDR = ('SIDR_REQ', 'SIDR_REP')
RETRY = r'REJECTED|rdma_connect|connect error|UNREACHABLE|ECONNREFUSED'

# name: (tool, server args, client args, done regex (client, server),
#        CM messages each capture must hold)
CASES = collections.OrderedDict([
    ('rping', ('rping', ['-s', '-a', SERVER_IP, '-C', '1000', '-S', '4096',
                         '-V'],
               ['-c', '-a', SERVER_IP, '-C', '1000', '-S', '4096', '-V'],
               (None, None), CONNECT + CLOSE)),
    ('rping-v', ('rping', ['-s', '-a', SERVER_IP, '-C', '100', '-v', '-V'],
                 ['-c', '-a', SERVER_IP, '-C', '100', '-v', '-V'],
                 (r'ping data: rdma-ping-99:', r'ping data: rdma-ping-99:'),
                 CONNECT + CLOSE)),
    ('ucmatose-10', ('ucmatose', ['-c', '10'], ['-s', SERVER_IP, '-c', '10'],
                     (r'test complete', r'test complete'),
                     CONNECT + CLOSE)),
    ('ucmatose-100', ('ucmatose', ['-c', '100'],
                      ['-s', SERVER_IP, '-c', '100'],
                      (r'test complete', r'test complete'),
                      CONNECT + CLOSE)),
    ('udaddy', ('udaddy', [], ['-s', SERVER_IP],
                (r'test complete', r'test complete'), SIDR)),
    ('rdma_server', ('rdma_server', [], ['-s', SERVER_IP],
                     (r'rdma_client: end 0', r'rdma_server: end 0'),
                     CONNECT + CLOSE)),
    ('ib_send_bw-R', ('ib_send_bw', ['-R', '-d', 'uroce0', '-F', '-n', '200',
                                     '-s', '4096'],
                      ['-R', '-d', 'uroce0', '-F', '-n', '200', '-s', '4096',
                       SERVER_IP], (r'^\s*4096\s+200\s', r'^\s*4096\s+200\s'),
                      CONNECT)),
    ('ib_write_lat-R', ('ib_write_lat', ['-R', '-d', 'uroce0', '-F', '-n',
                                         '200', '-s', '64'],
                        ['-R', '-d', 'uroce0', '-F', '-n', '200', '-s', '64',
                         SERVER_IP], (r'^\s*64\s+200\s', None), CONNECT)),
    ('ib_read_bw-R', ('ib_read_bw', ['-R', '-d', 'uroce0', '-F', '-n', '200',
                                     '-s', '65536'],
                      ['-R', '-d', 'uroce0', '-F', '-n', '200', '-s',
                       '65536', SERVER_IP],
                      (r'^\s*65536\s+200\s', r'^\s*65536\s+200\s'), CONNECT)),
    # the server listens on the wildcard (every uroce device); the client
    # binds each id to its address first (the "bind addr" step)
    ('cmtime-100', ('cmtime', [], ['-b', CLIENT_IP, '-s', SERVER_IP, '-c',
                                   str(CMTIME_CONNS)],
                    (None, None), CONNECT + CLOSE)),
])
# Tools whose server never ends (cmtime's serves until killed): it passes
# when it is still running, silent, once the client is done; then it is
# stopped.
SERVES_FOREVER = ('cmtime',)
# perftest with -R connects twice: a connection for its exchanges, then the
# test's, whose REQ its client sends as soon as its side of the exchange is
# done. When the server listens later than that, the REQ is REJECTED
# (reason 8, invalid service ID, as the kernel's cm answers), and the
# client's own retry reuses the ids it has just destroyed: it fails, while
# its server waits on the exchange connection for a client that is gone.
# A retry of these starts the server again too.
RESTART_BOTH = ('ib_send_bw', 'ib_write_lat', 'ib_read_bw')
GROUPS = {
    'rping': ['rping', 'rping-v'],
    'ucmatose': ['ucmatose-10', 'ucmatose-100'],
    'udaddy': ['udaddy'],
    'rdma_server': ['rdma_server'],
    'perftest': ['ib_send_bw-R', 'ib_write_lat-R', 'ib_read_bw-R'],
    'cmtime': ['cmtime-100'],
}

# cmtime's client: what it prints before each step, then one line a step
# (total ms, max ms, min us, us / conn); "bind addr" only with -b.
CMTIME_PHASES = ('creating id', 'binding source address', 'resolving address',
                 'resolving route', 'creating qp', 'connecting',
                 'disconnecting', 'destroying id')
CMTIME_STEPS = ('create id', 'bind addr', 'resolve addr', 'resolve route',
                'create qp', 'connect', 'disconnect', 'destroy')
# the steps each connection goes through in an exchange of messages: the
# time of its slowest is not 0 and its fastest took some time
CMTIME_TIMED = ('resolve addr', 'connect', 'disconnect')


def cmtime_steps(out):
    """{step: (total ms, max ms, min us, us / conn)} of cmtime's table."""
    steps = {}
    for m in re.finditer(r'^(\S[^:\n]*?)\s*:\s+([-\d.]+)\s+([-\d.]+)\s+'
                         r'([-\d.]+)\s+([-\d.]+)\s*$', out, re.M):
        steps[m.group(1)] = tuple(float(x) for x in m.group(2, 3, 4, 5))
    return steps


def check_cmtime(co, so, n):
    """Problems in cmtime's outputs for @n connections: every phase
    announced, in order, every step in the table with figures that agree
    (us / conn is the total over @n; both printed to 0.01), no error
    line on either side."""
    probs = []
    pos = 0
    for ph in CMTIME_PHASES:
        i = co.find(ph + '\n', pos)
        if i < 0:
            probs.append('client: no "%s" (in order)' % ph)
        else:
            pos = i
    steps = cmtime_steps(co)
    for st in CMTIME_STEPS:
        if st not in steps:
            probs.append('client: step "%s" missing' % st)
            continue
        total, mx, mn, per = steps[st]
        if min(total, mx, mn, per) < 0 or \
                abs(per * n - total * 1000) > 10 + n * 0.01:
            probs.append('client: step "%s" figures do not add up: %s'
                         % (st, steps[st]))
        # max is printed in ms to 0.01: 5 us of rounding against min's us
        if st in CMTIME_TIMED and (mx <= 0 or mn <= 0 or
                                   mx * 1000 + 5 < mn):
            probs.append('client: step "%s" not timed for every '
                         'connection: %s' % (st, steps[st]))
    for who, out in (('client', co), ('server', so)):
        for line in out.splitlines():
            if re.search(r'event: |error|fail|usage|Unhandled', line, re.I):
                probs.append('%s: %s' % (who, line.strip()))
    return probs


def tool_cmd(tool, args):
    pre = os.environ.get('UROCE_TEST_PRELOAD')
    cmd = ['stdbuf', '-oL', tool] + args
    if tool == 'rdma_server':
        cmd = ['stdbuf', '-oL', 'rdma_client' if args else 'rdma_server'] \
            + args
    if pre:
        return ['env', 'LD_PRELOAD=' + pre, 'ASAN_OPTIONS=detect_leaks=0'] \
            + cmd
    return cmd


class Run:
    def __init__(self, a, tag, tmp, wait_link=False):
        self.a, self.tag, self.tmp = a, tag, tmp
        self.wait_link = wait_link
        self.prefix = {s: 'uroce-cm-%s-%s' % (s, tag) for s in 'ab'}
        self.pcap = {s: os.path.join(tmp, '%s-%s.pcapng' % (tag, s))
                     for s in 'ab'}

    def env(self, side):
        e = dict(os.environ)
        role = 'server' if side == 'a' else 'client'
        e['UROCE_PORT_DEV'] = ('net_memif0,role=%s,id=0,socket=/run/uroce/'
                               'cm-%s.sock,mac=%s' % (role, self.tag,
                                                      MAC[side]))
        # the memif server listens at once, its link down until the
        # client comes; perftest gives up on a port that is not ACTIVE:
        # its server's open waits for the link instead
        if side == 'a' and not self.wait_link:
            e['UROCE_PORT_LINK_WAIT'] = '0'
        e['UROCE_EAL_ARGS'] = ('--no-pci --no-huge -m 256 --file-prefix=%s '
                               '--log-level=*:warning' % self.prefix[side])
        if self.a.fault:
            e['UROCE_PORT_FAULT'] = self.a.fault
        if self.a.capture:
            e['UROCE_PORT_PCAP'] = self.pcap[side]
        return e

    def start(self, side, tool, args):
        conf = self.a.conf_a if side == 'a' else self.a.conf_b
        out = tempfile.TemporaryFile(mode='w+')
        p = subprocess.Popen([self.a.run, '-c', conf, '--'] +
                             tool_cmd(tool, args), env=self.env(side),
                             stdout=out, stderr=subprocess.STDOUT,
                             stdin=subprocess.DEVNULL)
        return p, out

    def cleanup(self):
        for pfx in self.prefix.values():
            shutil.rmtree(os.path.join('/var/run/dpdk', pfx),
                          ignore_errors=True)


def restart_server(a, run, srv, tool, sargs, idx, attempt, tmp):
    """A new Run (new tag, captures, prefixes) with a new server, after the
    old server is killed and its files removed."""
    srv.kill()
    srv.wait()
    run.cleanup()
    for f in run.pcap.values():
        if os.path.exists(f):
            os.unlink(f)
    run = Run(a, '%d-%d-%d' % (os.getpid(), idx, attempt + 1), tmp,
              wait_link=run.wait_link)
    srv, sout = run.start('a', tool, sargs)
    return srv, sout, run


def finish(p, deadline):
    try:
        return p.wait(max(0.1, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
        return 'timeout'


def stop(p):
    """A server that serves until stopped: 0 when it was still running
    (then stopped with SIGTERM), else how it ended."""
    rc = p.poll()
    if rc is not None:
        return 'ended %s before it was stopped' % rc
    p.terminate()
    try:
        p.wait(10)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
    return 0


def output(f):
    f.seek(0)
    return f.read()


def cm_messages(path):
    """Counter of (CM message, 'in'/'out') in a capture, from tshark's
    decode of the MADs, with the pcapng direction of each frame."""
    import check_capture as cc
    dirs = [d for _, d in cc.read_pcapng(path)]
    cmd = ['tshark', '-r', path, '-n', '-T', 'fields', '-E',
           'occurrence=f', '-e', 'frame.number', '-e',
           'infiniband.mad.mgmtclass', '-e', 'infiniband.mad.attributeid']
    for p in cc.PREFS:
        cmd += ['-o', p]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    n = collections.Counter()
    for line in out.stdout.splitlines():
        num, cls, attr = (line.split('\t') + ['', ''])[:3]
        if cls and int(cls, 0) == 0x07 and attr:
            name = CM_ATTR.get(int(attr, 0), '?')
            n[(name, dirs[int(num) - 1])] += 1
    return n


def tshark_only(path):
    """check_capture.check()'s result from tshark alone (no scapy: no ICRC
    check), RoCEv2 frames counted without their direction."""
    sys.path.insert(0, os.path.join(os.path.dirname(
        os.path.abspath(__file__)), '..', 'wire'))
    from crosscheck_tshark import PAYLOAD_HEURISTICS, PREFS
    cmd = ['tshark', '-r', path, '-n', '-T', 'fields', '-E',
           'occurrence=a', '-E', 'aggregator=,', '-e', 'frame.number', '-e',
           'frame.protocols', '-e', '_ws.malformed', '-e',
           '_ws.expert.severity']
    # the heuristics that misread SEND payloads, off as in check_capture
    for h in PAYLOAD_HEURISTICS:
        cmd += ['--disable-heuristic', h]
    for p in PREFS:
        cmd += ['-o', p]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    probs, roce = [], 0
    if out.returncode != 0:
        probs.append('tshark failed: %s' % out.stderr.strip()[-200:])
    for line in out.stdout.splitlines():
        num, protos, malformed, sev = (line.split('\t') + [''] * 4)[:4]
        if malformed:
            probs.append('frame %s malformed (%s)' % (num, protos))
        if any(int(x, 0) >= 0x600000 for x in sev.split(',') if x):
            probs.append('frame %s: expert warning or error' % num)
        if 'infiniband' in protos.split(':'):
            roce += 1
    return {'problems': probs, 'roce': {'out': roce, 'in': roce}}


def cm_messages_any(path):
    """Counter of (CM message, '?') from tshark alone."""
    out = subprocess.run(['tshark', '-r', path, '-n', '-T', 'fields', '-E',
                          'occurrence=f', '-e', 'infiniband.mad.mgmtclass',
                          '-e', 'infiniband.mad.attributeid'],
                         capture_output=True, text=True, timeout=600)
    n = collections.Counter()
    for line in out.stdout.splitlines():
        cls, attr = (line.split('\t') + [''])[:2]
        if cls and int(cls, 0) == 0x07 and attr:
            n[(CM_ATTR.get(int(attr, 0), '?'), '?')] += 1
    return n


# The field that tells one connection's message from another's: the
# REQ's QPN, the comm ID the sender of the others gave its side.
CM_CONN_FIELD = {'REQ': 'infiniband.cm.req.localqpn',
                 'REP': 'infiniband.cm.rep.remotecommid',
                 'RTU': 'infiniband.cm.rtu.localcommid',
                 'DREQ': 'infiniband.cm.dreq.localcommid',
                 'DREP': 'infiniband.cm.drsp.localcommid'}


def cm_connections(path):
    """{CM message: how many connections it was sent for} in a capture
    (resends of one connection's message count once)."""
    names = sorted(CM_CONN_FIELD)
    cmd = ['tshark', '-r', path, '-n', '-T', 'fields', '-E', 'occurrence=f']
    for m in names:
        cmd += ['-e', CM_CONN_FIELD[m]]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    seen = collections.defaultdict(set)
    for line in out.stdout.splitlines():
        for m, v in zip(names, line.split('\t')):
            if v:
                seen[m].add(v)
    return {m: len(seen[m]) for m in names}


def drep_sent(run, side, full):
    """Whether @side's capture holds a DREP it sent."""
    msgs = (cm_messages if full else cm_messages_any)(run.pcap[side])
    return msgs.get(('DREP', 'out'), 0) > 0


def capture_report(path, full):
    """(check result, CM messages, summary) of one capture; @full: with
    check_capture.check() (scapy's ICRC check), else tshark alone."""
    if full:
        import check_capture as cc
        r = cc.check(path)
        return r, cm_messages(path), cc.summary(path, r)
    r = tshark_only(path)
    return r, cm_messages_any(path), \
        '%d RoCEv2 frames (tshark only)' % r['roce']['out']


def check_captures(run, want, full, conns=None):
    """(ok, lines) for both captures of a finished run; @full: with
    check_capture.check() (scapy's ICRC check), else tshark alone;
    @conns: how many connections each message of @want was sent for."""
    lines, ok = [], True
    reports = capture_pool.starmap(capture_report,
                                   [(run.pcap[s], full) for s in 'ab'])
    for side, (r, msgs, summ) in zip('ab', reports):
        lines.append('  capture %s %s; CM %s' % (
            side, summ,
            ', '.join('%s %s %d' % (k[0], k[1], v)
                      for k, v in sorted(msgs.items()))))
        probs = list(r['problems'])
        if r['roce']['out'] == 0:
            probs.append('no RoCEv2 frame sent')
        # each message of the exchange is in the capture of both sides,
        # sent by one and received by the other; but a program that
        # disconnects and exits at once (rping's client) may be gone
        # before its peer's program answers the DREQ (rdma_disconnect()
        # sends the DREP, as the kernel's rdma_cm does): the DREP then
        # needs only to have left the other side
        for m in want:
            if sum(v for k, v in msgs.items() if k[0] == m) > 0:
                continue
            if m == 'DREP' and msgs.get(('DREQ', 'out'), 0) > 0 and \
                    drep_sent(run, 'b' if side == 'a' else 'a', full):
                lines.append('    DREP sent by the other side after this '
                             'one had stopped')
                continue
            probs.append('no %s in the capture' % m)
        if conns is not None:
            got = cm_connections(run.pcap[side])
            lines.append('    connections: ' + ', '.join(
                '%s %d' % (m, got.get(m, 0)) for m in want))
            probs += ['%s sent for %d connections, not %d' %
                      (m, got.get(m, 0), conns) for m in want
                      if got.get(m, 0) != conns]
        lines += ['    ' + p for p in probs]
        ok = ok and not probs
    return ok, lines


def with_count(args, n):
    """args with the value after -C replaced by n."""
    i = args.index('-C') + 1
    return args[:i] + [str(n)] + args[i + 1:]


def run_case(a, idx, name, tmp):
    tool, sargs, cargs, done, want = CASES[name]
    if name == 'rping' and a.rping_count:
        sargs, cargs = (with_count(x, a.rping_count) for x in (sargs, cargs))
    real = 'rdma_server' if tool == 'rdma_server' else tool
    if shutil.which(real) is None:
        print('SKIP %s: %s not installed' % (name, real))
        return None
    deadline = time.monotonic() + a.timeout
    run = Run(a, '%d-%d' % (os.getpid(), idx), tmp,
              wait_link=tool.startswith('ib_'))
    srv = cli = None
    try:
        srv, sout = run.start('a', tool, sargs if tool != 'rdma_server'
                              else [])
        for attempt in range(ATTEMPTS):
            time.sleep(1 + attempt)     # the server binds and listens
            cli, cout = run.start('b', tool, cargs)
            crc = finish(cli, deadline)
            co = output(cout)
            if crc == 0 and tool in SERVES_FOREVER and \
                    re.search(RETRY, co) and attempt + 1 < ATTEMPTS:
                continue        # its client ends 0 after a REJECTED too
            if crc == 0 or srv.poll() is not None or \
                    not re.search(RETRY, co) or attempt + 1 == ATTEMPTS:
                break
            if tool in RESTART_BOTH:
                srv, sout, run = restart_server(a, run, srv, tool, sargs,
                                                idx, attempt, tmp)
        if tool in SERVES_FOREVER:
            src = stop(srv)
        else:
            src = finish(srv, deadline if crc == 0 else
                         time.monotonic() + 2)
        so = output(sout)
    finally:
        for p in (srv, cli):
            if p is not None and p.poll() is None:
                p.kill()
                p.wait()
        run.cleanup()
    ok = src == 0 and crc == 0 and \
        (done[0] is None or re.search(done[0], co, re.M)) and \
        (done[1] is None or re.search(done[1], so, re.M))
    lines, conns = [], None
    if tool == 'cmtime':
        conns = int(cargs[cargs.index('-c') + 1])
        probs = check_cmtime(co, so, conns)
        lines += ['  ' + p for p in probs]
        ok = ok and not probs
    if ok and a.capture:
        ok, more = check_captures(run, want, a.full_capture, conns)
        lines += more
    print('%s %s (server %s, client %s)' % ('ok  ' if ok else 'FAIL', name,
                                            src, crc))
    if lines and (not ok or a.verbose):
        print('\n'.join(lines))
    if not ok or a.verbose:
        print('---- server:\n%s---- client:\n%s----' % (so[-3000:],
                                                          co[-3000:]))
    for f in run.pcap.values():
        if os.path.exists(f) and ok:
            os.unlink(f)
    return bool(ok)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--run', required=True)
    ap.add_argument('--conf-a', required=True)
    ap.add_argument('--conf-b', required=True)
    ap.add_argument('--group', action='append', choices=sorted(GROUPS))
    ap.add_argument('--only', help='cases whose name matches')
    ap.add_argument('--fault', help='UROCE_PORT_FAULT for both sides')
    ap.add_argument('--timeout', type=float, default=120)
    ap.add_argument('--rping-count', type=int,
                    help="rping's -C (pings) in the case rping")
    ap.add_argument('--capture', action='store_true')
    ap.add_argument('-v', '--verbose', action='store_true')
    a = ap.parse_args()
    a.run = os.path.abspath(a.run)
    a.conf_a, a.conf_b = os.path.abspath(a.conf_a), os.path.abspath(a.conf_b)
    a.full_capture = False
    if a.capture and shutil.which('tshark') is None:
        print('SKIP capture checks: tshark is not installed')
        a.capture = False
    elif a.capture:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        try:
            import check_capture  # noqa: F401
            a.full_capture = True
        except SystemExit:
            print('capture checks with tshark alone: scapy is not '
                  'available (no ICRC check)')
    names = [n for g in (a.group or sorted(GROUPS)) for n in GROUPS[g]]
    tmp = tempfile.mkdtemp(prefix='uroce-rdmacm-')
    results = []
    try:
        for idx, name in enumerate(names):
            if a.only and not re.search(a.only, name):
                continue
            results.append(run_case(a, idx, name, tmp))
    finally:
        capture_pool.close()
        if all(r is not False for r in results):
            shutil.rmtree(tmp, ignore_errors=True)
        else:
            print('captures of the failed cases kept in %s' % tmp)
    ran = [r for r in results if r is not None]
    print('%d passed, %d failed, %d skipped' %
          (ran.count(True), ran.count(False), len(results) - len(ran)))
    if not ran:
        return SKIP
    return 1 if False in ran else 0


if __name__ == '__main__':
    sys.exit(main())
