#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The uroce authors
"""uroce against Linux Soft-RoCE (rdma_rxe), an independent RoCEv2
implementation, in a QEMU guest.

The guest (guest.py: Debian's kernel, a busybox initramfs with rdma-core's
tools) boots once per run, on a tap in a network namespace of its own
(vm.py); rxe0 is added on its eth0 with `rdma link add`. Each case runs
one unmodified tool twice, once each way:

  rxe-server    the tool's server in the guest on rxe0, its client on the
                host under uroce-run (af_packet on the tap);
  uroce-server  the reverse.

The tools exchange their QP numbers over TCP between the kernels (the
host's tap address and the guest's eth0); RoCEv2 goes between rxe0
(the guest's address) and uroce (an address the host kernel does not
own). A case passes when both sides exit 0 with what the tool prints
after a finished run, and uroce's capture of the run (every RoCEv2 frame
it sent and received, pcapng) passes check_capture.py as the conformance
captures do: tshark decodes every frame, nothing malformed, every ICRC
verifies, frames both ways.

Groups (--group, several allowed; default core):
  rc, uc, ud, srq   ibv_*_pingpong, sizes up to 64 KiB, with and without -e,
                    -c where the tool checks the data;
  perf              perftest's ib_{write,read,send,atomic}_bw and _lat with
                    their defaults (128 outstanding READs and atomics);
  ip6               RC, UD and ib_write_bw on the IPv6 link-local GIDs;
  loss              the guest's eth0 drops 1% of the frames it sends
                    (netem on its root qdisc), transfers checked by
                    ibv_rc_pingpong -c, perftest completing;
  loss-read         ib_read_bw with rxe answering uroce's READs under that
                    loss: known to fail (docs/interop.md), only when named;
  rdmacm            rping -V, ucmatose, udaddy and perftest -R between
                    the kernel's RDMA CM and uroce's librdmacm: the
                    server listens on its RoCEv2 address, the client
                    connects through the CM (run again while it came
                    before the listener); uroce's capture must hold the
                    CM MADs (tshark's decode), each from the right side;
  core              the cases marked core of every group, one boot: the
                    suite's `interop` test;
  all               every case of every group (`interop_full`, suite
                    interop-full, opt-in).

For each bandwidth case it prints what each side sent and sent again: for
uroce from its capture (request frames out, and those whose QPN and PSN
had already gone out: retransmissions), for rxe from the difference of its
hw_counters (sent_pkts, and the retry and duplicate counters). On a
failure it prints both tools' output, the guest's rxe counters and the end
of its dmesg.

Every wait is bounded (a deadline per case, killed past it). Needs root
(namespaces, a tap), qemu-system-x86, the packages guest.py lists; else
exit 77 (skip). Run it under the shared lock: TCG takes a core.
"""

import argparse
import collections
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, '..', 'conformance'))
import guest as guest_build  # noqa: E402
import vm  # noqa: E402

SKIP = 77
PORT_BASE = 18700
PINGPONG_DONE = r'\d+ iters in [0-9.]+ seconds'
PERF_DONE = r'^\s*\d+\s+\d+\s+[0-9.]+\s+[0-9.]+'
LAT_DONE = r'^\s*\d+\s+\d+\s+[0-9.]+\s+[0-9.]+\s+[0-9.]+'
BW = 'bw'


class Case:
    """A tool and its arguments (the same on both sides but the device,
    GID index, TCP port and server address, which run_case adds); core:
    in the subset of group core."""

    def __init__(self, tool, args, done, kind=None, gid='v4', core=False,
                 direction=None):
        self.tool, self.args, self.done = tool, args, done
        self.kind, self.gid, self.core = kind, gid, core
        self.direction = direction      # None: both ways
        self.name = '%s %s' % (tool, ' '.join(args))
        self.perftest = tool.startswith('ib_')


def pp(tool, *args, core=False, gid='v4'):
    return Case('ibv_%s_pingpong' % tool, list(args), PINGPONG_DONE,
                gid=gid, core=core)


def perf(tool, *args, core=False, gid='v4', direction=None):
    lat = tool.endswith('_lat')
    return Case(tool, list(args), LAT_DONE if lat else PERF_DONE,
                None if lat else BW, gid=gid, core=core, direction=direction)


CASES = {
    'rc': [
        pp('rc', '-n', '100'),
        pp('rc', '-s', '1', '-n', '100'),
        pp('rc', '-s', '65536', '-n', '20', '-c', core=True),
        pp('rc', '-s', '4096', '-n', '50', '-e', core=True),
        pp('rc', '-s', '16384', '-n', '20', '-c', '-e'),
    ],
    'uc': [
        pp('uc', '-n', '100'),
        pp('uc', '-s', '65536', '-n', '20', core=True),
        pp('uc', '-s', '4096', '-n', '50', '-e'),
    ],
    'ud': [
        pp('ud', '-s', '1', '-n', '100'),
        pp('ud', '-s', '1024', '-n', '100'),
        pp('ud', '-s', '512', '-n', '50', '-e', core=True),
    ],
    'srq': [
        pp('srq', '-q', '4', '-n', '50'),
        pp('srq', '-q', '4', '-s', '65536', '-n', '10', core=True),
        pp('srq', '-q', '2', '-n', '50', '-e'),
    ],
    # With perftest's defaults: rxe and uroce both offer 128 outstanding
    # READs and atomics (max_qp_rd_atom), which perftest takes as its
    # own side's -o without asking the peer.
    # ib_read_bw's local ACK timeout is 2^16 x 4.096 us (268 ms, -u 16)
    # rather than perftest's 67 ms: the guest, emulated on a loaded host,
    # now and then answers nothing for more than retry_cnt (7) x 67 ms
    # while it works through 128 outstanding READs (docs/interop.md).
    'perf': [
        perf('ib_write_bw', '-n', '200', '-s', '65536', core=True),
        perf('ib_read_bw', '-n', '200', '-s', '65536', '-u', '16',
             core=True),
        perf('ib_send_bw', '-n', '200', '-s', '4096'),
        perf('ib_atomic_bw', '-n', '200'),
        perf('ib_write_lat', '-n', '100', '-s', '64'),
        perf('ib_read_lat', '-n', '100', '-s', '64'),
        perf('ib_send_lat', '-n', '100', '-s', '64'),
        perf('ib_atomic_lat', '-n', '100', core=True),
    ],
    'ip6': [
        pp('rc', '-s', '65536', '-n', '20', '-c', gid='v6', core=True),
        pp('ud', '-s', '1024', '-n', '50', gid='v6'),
        perf('ib_write_bw', '-n', '200', '-s', '65536', gid='v6'),
    ],
    'loss': [
        pp('rc', '-s', '65536', '-n', '50', '-c', core=True),
        pp('rc', '-s', '4096', '-n', '200', '-c'),
        perf('ib_write_bw', '-n', '500', '-s', '65536'),
        perf('ib_read_bw', '-n', '500', '-s', '65536',
             direction='uroce-server'),
    ],
    # Known to fail, run only when named: rxe answering uroce's 128
    # outstanding 64 KiB READs while the guest drops 1% of its frames
    # ends in IBV_WC_RETRY_EXC_ERR at uroce (docs/interop.md, Findings).
    'loss-read': [
        perf('ib_read_bw', '-n', '500', '-s', '65536',
             direction='rxe-server'),
    ],
}


class CmCase:
    """An RDMA CM tool: its server's and its client's arguments ({srv}:
    the server side's RoCEv2 address, {dev}: the side's device), what
    each prints after a finished run (None: its exit status says it),
    the CM messages uroce's capture must hold."""

    def __init__(self, tool, sargs, cargs, done, want, core=False):
        self.tool, self.sargs, self.cargs = tool, sargs, cargs
        self.done, self.want, self.core = done, want, core
        self.direction, self.gid = None, 'v4'
        self.name = '%s %s' % (tool, ' '.join(cargs).replace(' {srv}', '')
                                .replace('{dev}', 'DEV'))


CONNECT = ('REQ', 'REP', 'RTU')
CLOSE = ('DREQ', 'DREP')
SIDR = ('SIDR_REQ', 'SIDR_REP')
# Who sends each CM message: the client (the active side) or the server.
CM_SENDER = {'REQ': 'client', 'REP': 'server', 'RTU': 'client',
             'SIDR_REQ': 'client', 'SIDR_REP': 'server'}
# A client that reached the server before it listened (REJ, "invalid
# service ID", or no answer) is run again, at most CM_ATTEMPTS times.
# perftest's client names a REJECTED event of its first connection by its
# number only ("Unexpected CM event ... 8").
CM_ATTEMPTS = 5
CM_RETRY = (r'REJECTED|ADDR_ERROR|ROUTE_ERROR|rdma_connect|connect error|'
            r'UNREACHABLE|ECONNREFUSED|Unexpected CM event')
# perftest with -R connects twice: a connection for its exchanges, then the
# test's, whose REQ its client sends as soon as its side of the last
# exchange is done. A server that listens later than that (the guest's,
# under TCG) gets the REQ before its rdma_listen(): REJ reason 8, invalid
# service ID, as the kernel's cm answers too. perftest 4.5's own retry
# (rdma_cm_client_connection) then reuses the ids and channel it has just
# destroyed and fails, while its server waits on the exchange connection:
# a client started again alone would have its exchange taken for the test
# connection. A retry of these starts the server again too.
RESTART_BOTH = ('ib_send_bw', 'ib_write_lat', 'ib_read_bw')


def perf_cm(tool, size, n, core=False):
    args = ['-R', '-d', '{dev}', '-F', '-n', str(n), '-s', str(size)]
    row = r'^\s*%d\s+%d\s' % (size, n)
    return CmCase(tool, args, args + ['{srv}'],
                  (row, None if tool.endswith('_lat') else row), CONNECT,
                  core=core)


# rping -V checks every ping's data (a mismatch is an error exit) and
# prints nothing else without -v; perftest -R connects through the RDMA
# CM instead of its TCP exchange (the latency server prints no table).
RDMACM_CASES = [
    CmCase('rping', ['-s', '-a', '{srv}', '-C', '100', '-S', '4096', '-V'],
           ['-c', '-a', '{srv}', '-C', '100', '-S', '4096', '-V'],
           (None, None), CONNECT + CLOSE, core=True),
    CmCase('ucmatose', ['-b', '{srv}', '-c', '10'], ['-s', '{srv}', '-c',
                                                      '10'],
           (r'test complete', r'test complete'), CONNECT + CLOSE,
           core=True),
    CmCase('udaddy', ['-b', '{srv}'], ['-s', '{srv}'],
           (r'test complete', r'test complete'), SIDR, core=True),
    perf_cm('ib_send_bw', 4096, 200, core=True),
    perf_cm('ib_write_lat', 64, 100, core=True),
    perf_cm('ib_read_bw', 65536, 100),
]
CASES['rdmacm'] = RDMACM_CASES
GROUPS = ['rc', 'uc', 'ud', 'srq', 'perf', 'ip6', 'loss', 'rdmacm']
GUEST_SETUP = 'rdma link add rxe0 type rxe netdev eth0'
# iproute2's tc by its path: the guest's busybox shell prefers its own
# applet of that name, which has no netem. netem's own queue holds 1,000
# frames by default, fewer than rxe answers 128 outstanding 64 KiB READs
# with at once (8,192): the limit is raised to fq_codel's (the guest's
# default qdisc), so that the frames dropped are the 1% asked for and not
# a full queue's tail.
LOSS_ON = '/usr/bin/tc qdisc add dev eth0 root netem loss 1% limit 10240'
LOSS_OFF = '/usr/bin/tc qdisc del dev eth0 root'


# The af_packet ring's frames (DPDK's default: 512). rxe answers 128
# outstanding 64 KiB READs with up to 8,192 response packets at once; with
# 512 frames, single responses were dropped now and then while the ring was
# full, and each cost a go-back-N resend of every READ after it. 4,096
# frames of 2 KiB (8 MiB) take the bursts here.
AFP_FRAMES = 4096


def uroce_conf(path):
    with open(path, 'w') as f:
        f.write('[port]\n'
                'dev = net_af_packet0,iface=%s,qdisc_bypass=1,framecnt=%d\n'
                'ip = %s/%d\n'
                'mtu = 1500\n'
                '[eal]\n'
                'lcores = 1\n' % (vm.TAP, AFP_FRAMES, vm.UROCE_IP,
                                   vm.PREFIX))


def rxe_gids(g):
    """{'v4': index, 'v6': index} of rxe0's RoCE v2 GIDs: the
    IPv4-mapped one of the guest's address and the link-local one."""
    out = g.check('cd /sys/class/infiniband/rxe0/ports/1 && for i in '
                  '$(seq 0 15); do echo "$i $(cat gids/$i) '
                  '$(cat gid_attrs/types/$i 2>/dev/null)"; done')
    found = {}
    mapped = '0000:0000:0000:0000:0000:ffff:%s' % ''.join(
        '%02x' % int(b) for b in vm.GUEST_IP.split('.'))
    mapped = mapped[:-4] + ':' + mapped[-4:]
    for line in out.splitlines():
        w = line.split(None, 2)
        if len(w) < 3 or 'v2' not in w[2]:
            continue
        if w[1] == mapped:
            found.setdefault('v4', int(w[0]))
        elif w[1].startswith('fe80:'):
            found.setdefault('v6', int(w[0]))
    return found


def guest_listening(g, port):
    st, out = g.run('cat /proc/net/tcp /proc/net/tcp6')
    return st == 0 and listening_in(out, port)


def listening_in(text, port):
    for line in text.splitlines():
        col = line.split()
        if len(col) > 3 and col[3] == '0A' and ':' in col[1]:
            try:
                if int(col[1].rsplit(':', 1)[1], 16) == port:
                    return True
            except ValueError:
                pass
    return False


def host_listening(g, port):
    out = subprocess.run(g.host_cmd(['cat', '/proc/net/tcp',
                                     '/proc/net/tcp6']),
                         capture_output=True, text=True, timeout=30).stdout
    return listening_in(out, port)


class Host:
    """A tool under uroce-run in the guest's namespace."""

    def __init__(self, a, g, tag):
        self.a, self.g, self.tag = a, g, tag
        self.prefix = 'uroce-interop-%s' % tag
        self.pcap = os.path.join(a.capture_dir, '%s.pcapng' % tag)
        self.out = tempfile.TemporaryFile(mode='w+')
        self.p = None

    def start(self, argv, gate=None):
        """Run argv; gate: the path prefix cm_gate.c waits on, if any."""
        e = dict(os.environ)
        e['UROCE_EAL_ARGS'] = ('--no-pci --no-huge -m 256 --file-prefix=%s '
                               '--log-level=*:warning' % self.prefix)
        e['UROCE_PORT_PCAP'] = self.pcap
        pre = [p for p in (os.environ.get('UROCE_TEST_PRELOAD'),  # sanitizers
                           self.a.cm_gate if gate else None) if p]
        if gate:
            e['UROCE_INTEROP_CM_GATE'] = gate
        if pre:
            argv = ['env', 'LD_PRELOAD=' + ' '.join(pre),
                    'ASAN_OPTIONS=detect_leaks=0'] + argv
        cmd = self.g.host_cmd([self.a.run, '-c', self.a.conf, '--'] + argv)
        self.p = subprocess.Popen(cmd, env=e, stdout=self.out,
                                  stderr=subprocess.STDOUT,
                                  stdin=subprocess.DEVNULL)

    def wait(self, deadline):
        try:
            return self.p.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            self.kill()
            return 'timeout'

    def kill(self):
        if self.p is not None and self.p.poll() is None:
            os.kill(self.p.pid, signal.SIGKILL)
            self.p.wait()

    def output(self):
        self.out.seek(0)
        return self.out.read()

    def cleanup(self):
        self.kill()
        shutil.rmtree(os.path.join('/var/run/dpdk', self.prefix),
                      ignore_errors=True)


def tool_args(case, dev, gid, port):
    args = list(case.args)
    if case.perftest:
        return ['-d', dev, '-x', str(gid), '-F', '-p', str(port)] + args
    return ['-d', dev, '-g', str(gid), '-p', str(port)] + args


def requests(cap, path, direction):
    """(request packets that went direction in uroce's capture, how many
    of them repeated a (QPN, PSN) already seen that way): 'out' counts
    what uroce sent and sent again, 'in' what it received of rxe's.
    Requests are the BTH opcodes whose low five bits are below 0x0d (SEND
    to RDMA READ request) or the atomics (0x13, 0x14); responses and ACKs
    are not counted."""
    seen, sent, again = set(), 0, 0
    for frame, d in cap.read_pcapng(path):
        r = cap.roce_opcode(frame)
        if r is None or d != direction:
            continue
        op, off, ver = r
        low = op & 0x1f
        if not (low <= 0x0c or low in (0x13, 0x14)):
            continue
        udp = off + ((frame[off] & 0xf) * 4 if ver == 4 else 40)
        bth = frame[udp + 8:udp + 20]
        key = (bth[5:8], bth[9:12])
        sent += 1
        if key in seen:
            again += 1
        seen.add(key)
    return sent, again


RXE_SHOWN = ('sent_pkts', 'rcvd_pkts', 'duplicate_request',
             'out_of_seq_request', 'rcvd_seq_err', 'completer_retry_err',
             'retry_exceeded_err', 'rcvd_rnr_err', 'send_rnr_err')


def counter_line(before, after):
    d = {k: after.get(k, 0) - before.get(k, 0) for k in RXE_SHOWN}
    return ' '.join('%s %d' % (k, d[k]) for k in RXE_SHOWN if k in after)


def check_capture(cap, path):
    """Problems of uroce's capture of a case, as run_pair.py checks
    them."""
    res = cap.check(path)
    probs = list(res['problems'])
    if res['roce']['out'] == 0 or res['roce']['in'] == 0:
        probs.append('no RoCEv2 frame one way')
    return res, probs


def run_case(a, g, cap, idx, case, direction):
    port = PORT_BASE + idx
    tag = '%d-%d' % (os.getpid(), idx)
    host = Host(a, g, tag)
    gargs = tool_args(case, 'rxe0', a.gids[case.gid], port)
    hargs = tool_args(case, 'uroce0', 0 if case.gid == 'v4' else 1, port)
    deadline = time.monotonic() + a.timeout
    before = g.rxe_counters() if case.kind == BW else None
    job, gres, hrc = None, (None, ''), None
    why = ''
    try:
        if direction == 'rxe-server':
            job = g.start(' '.join(['exec', case.tool] + gargs))
            while not guest_listening(g, port) and \
                    job.poll()[0] == 'running' and \
                    time.monotonic() < deadline:
                time.sleep(0.2)
            if guest_listening(g, port):
                host.start([case.tool] + hargs + [vm.GUEST_IP])
                hrc = host.wait(deadline)
            else:
                why = 'the guest server never listened'
            gres = job.wait(deadline if hrc == 0 else
                            min(deadline, time.monotonic() + 5))
        else:
            host.start([case.tool] + hargs)
            while not host_listening(g, port) and host.p.poll() is None \
                    and time.monotonic() < deadline:
                time.sleep(0.1)
            if host_listening(g, port):
                job = g.start(' '.join(['exec', case.tool] + gargs +
                                      [vm.HOST_IP]))
                gres = job.wait(deadline)
            else:
                why = 'the uroce server never listened'
            hrc = host.wait(deadline if gres[0] == 0 else
                            min(deadline, time.monotonic() + 5))
    finally:
        host.cleanup()
        if job is not None and job.result is None:
            gres = job.wait(time.monotonic())
    hout = host.output()
    gout = gres[1]
    done = re.compile(case.done, re.M)
    # perftest's latency servers print no result table: only the client.
    lat_server = {'rxe-server': 'guest', 'uroce-server': 'host'}[direction] \
        if case.tool.endswith('_lat') else None
    ok = hrc == 0 and gres[0] == 0 and not why and \
        (done.search(hout) or lat_server == 'host') and \
        (done.search(gout) or lat_server == 'guest')
    lines = []
    if ok and cap is not None:
        res, probs = check_capture(cap, host.pcap)
        lines.append('  capture ' + cap.summary(host.pcap, res))
        lines += ['    ' + p for p in probs]
        ok = not probs
    if ok and case.kind == BW:
        after = g.rxe_counters()
        if cap is not None:
            lines.append('  requests: uroce sent %d (%d again), uroce '
                         'received %d (%d again)' %
                         (requests(cap, host.pcap, 'out') +
                          requests(cap, host.pcap, 'in')))
        lines.append('  rxe: ' + counter_line(before, after))
    print('%s %s [%s] (uroce %s, rxe %s)%s' % (
        'ok  ' if ok else 'FAIL', case.name, direction
        + ('' if case.gid == 'v4' else ', IPv6 GID'), hrc, gres[0],
        (': ' + why) if why else ''))
    print('\n'.join(lines))
    finish_case(a, g, ok, host.pcap, (hargs, hout), (gargs, gout))
    return bool(ok)


def finish_case(a, g, ok, pcap, uroce, rxe):
    """On a failure both tools' arguments and output ((args, output) each),
    rxe's counters and the guest's dmesg, the captures kept; else the
    case's capture removed."""
    if not ok:
        print('---- uroce (%s):\n%s---- rxe (%s):\n%s----' % (
            ' '.join(uroce[0]), uroce[1], ' '.join(rxe[0]), rxe[1]))
        print('---- rxe counters: %s' % g.rxe_counters())
        print('---- guest dmesg (last 30 lines):\n%s----' %
              '\n'.join(g.dmesg().splitlines()[-30:]))
        a.keep_captures = True
    elif os.path.exists(pcap) and not a.keep_captures:
        os.unlink(pcap)
    sys.stdout.flush()


def cm_args(args, dev, srv, port):
    """A CM case's arguments for one side; perftest's -p its own port."""
    out = [w.format(dev=dev, srv=srv) for w in args]
    return out + ['-p', str(port)] if out[:1] == ['-R'] else out


def cm_problems(path, case, role):
    """What uroce's capture of a CM case lacks: each message of
    case.want sent by the side CM_SENDER says (uroce being role); a DREQ
    either way, and its DREP, unless uroce sent the DREQ: a program that
    disconnects and exits at once (rping's client) may be gone before its
    peer's program answers (the DREP leaves when that program calls
    rdma_disconnect(), in the kernel's rdma_cm as in ours)."""
    import check_rdmacm
    msgs = check_rdmacm.cm_messages(path)
    probs = []
    for m in case.want:
        if m in CM_SENDER:
            way = 'out' if CM_SENDER[m] == role else 'in'
            if not msgs.get((m, way)):
                probs.append('no %s %s in the capture' % (m, way))
    if 'DREQ' in case.want:
        if not msgs.get(('DREQ', 'in')) and not msgs.get(('DREQ', 'out')):
            probs.append('no DREQ in the capture')
        elif msgs.get(('DREQ', 'in')) and not msgs.get(('DREP', 'out')):
            probs.append('a DREQ came in and no DREP went out')
    probs += psn_problems(path)
    summary = ', '.join('%s %s %d' % (k[0], k[1], v)
                        for k, v in sorted(msgs.items()))
    return summary, probs


PSN_FIELDS = ('infiniband.bth.opcode', 'infiniband.bth.destqp',
              'infiniband.bth.psn', 'infiniband.cm.req.localqpn',
              'infiniband.cm.req.startpsn', 'infiniband.cm.rep.localqpn',
              'infiniband.cm.rep.startpsn')


def psn_problems(path):
    """A REQ's or REP's Starting PSN is the first PSN its sender's QP
    receives (Linux's cm.c sets the QPs so): the first request packet to
    the QP a REQ or REP names (its Local QPN) must carry that PSN."""
    cmd = ['tshark', '-r', path, '-n', '-T', 'fields', '-E',
           'occurrence=f']
    for f in PSN_FIELDS:
        cmd += ['-e', f]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    want, first = {}, {}
    for line in out.stdout.splitlines():
        op, dqp, psn, rq, rpsn, pq, ppsn = (line.split('\t') + [''] * 7)[:7]
        for qpn, start in ((rq, rpsn), (pq, ppsn)):
            if qpn and start:
                want.setdefault(int(qpn, 0), int(start, 0))
        if op and dqp and int(dqp, 0) > 1:
            low = int(op, 0) & 0x1f
            if low <= 0x0c or low in (0x13, 0x14):
                first.setdefault(int(dqp, 0), int(psn, 0))
    return ['QP %#x: the first request to it has PSN %#x, its side\'s CM '
            'message said %#x' % (q, first[q], p)
            for q, p in want.items() if q in first and first[q] != p]


def cm_side(a, g, tag, where, tool, args, gate=None):
    """Start one side of a CM case: (Host, None) on the host, (None, Job)
    in the guest."""
    if where == 'host':
        h = Host(a, g, tag)
        h.start([tool] + args, gate)
        return h, None
    return None, g.start(' '.join(['exec', tool] + args))


def guest_cm_listening(g, port):
    """Whether the guest's RDMA CM has an ID listening on port."""
    st, out = g.run('rdma res show cm_id')
    return st == 0 and any('LISTEN' in ln and
                           re.search(r':%d\b' % port, ln)
                           for ln in out.splitlines())


def cm_wait(side, deadline, gate=None, g=None, port=None):
    """(status, output) of a side started by cm_side(); with gate, each
    connection its cm_gate.c waits on is let go once the guest listens on
    port."""
    h, job = side
    if h is None:
        return job.wait(deadline)
    n = 2
    while gate and h.p.poll() is None and time.monotonic() < deadline:
        if os.path.exists('%s.%d.wait' % (gate, n)) and \
                guest_cm_listening(g, port):
            open('%s.%d' % (gate, n), 'w').close()
            n += 1
        time.sleep(0.1)
    return h.wait(deadline), h.output()


def cm_stop(side):
    """Kill a side started by cm_side(), if it still runs."""
    h, job = side
    if h is not None:
        h.kill()
    elif job.result is None:
        job.wait(time.monotonic())


def run_cm_case(a, g, cap, idx, case, direction):
    """One RDMA CM case one way: the server started, then its client, run
    again while it reached the server before it listened."""
    uroce_srv = direction == 'uroce-server'
    srv_ip = vm.UROCE_IP if uroce_srv else vm.GUEST_IP
    port = PORT_BASE + idx
    where = {'server': 'host' if uroce_srv else 'guest',
             'client': 'guest' if uroce_srv else 'host'}
    dev = {'host': 'uroce0', 'guest': 'rxe0'}
    sargs = cm_args(case.sargs, dev[where['server']], srv_ip, port)
    cargs = cm_args(case.cargs, dev[where['client']], srv_ip, port)
    deadline = time.monotonic() + a.timeout
    tag = '%d-%d' % (os.getpid(), idx)
    srv = cm_side(a, g, tag + 's', where['server'], case.tool, sargs)
    cli, hosts = None, [srv[0]]
    try:
        for attempt in range(CM_ATTEMPTS):
            time.sleep(1 if attempt else 0.5)
            gate = None
            if case.tool in RESTART_BOTH and not uroce_srv and a.cm_gate:
                gate = os.path.join(a.capture_dir, 'gate-%s-%d' % (tag,
                                                                   attempt))
            cli = cm_side(a, g, '%sc%d' % (tag, attempt), where['client'],
                          case.tool, cargs, gate)
            hosts.append(cli[0])
            cres = cm_wait(cli, deadline, gate, g, port)
            if cres[0] == 0 or not re.search(CM_RETRY, cres[1]) or \
                    time.monotonic() >= deadline:
                break
            if case.tool in RESTART_BOTH:
                cm_stop(srv)
                srv = cm_side(a, g, '%ss%d' % (tag, attempt + 1),
                              where['server'], case.tool, sargs)
                hosts.append(srv[0])
        sres = cm_wait(srv, deadline if cres[0] == 0 else
                       min(deadline, time.monotonic() + 5))
    finally:
        for h in hosts:
            if h is not None:
                h.cleanup()
        if srv[1] is not None and srv[1].result is None:
            srv[1].wait(time.monotonic())
    host = srv[0] if uroce_srv else cli[0]
    res = {'server': sres, 'client': cres}
    ok = all(res[r][0] == 0 and (case.done[i] is None or
                                 re.search(case.done[i], res[r][1], re.M))
             for i, r in enumerate(('client', 'server')))
    lines = ['  client attempts: %d' % (attempt + 1)] if attempt else []
    if ok and cap is not None:
        res_cap, probs = check_capture(cap, host.pcap)
        summary, cm_probs = cm_problems(host.pcap, case,
                                        'server' if uroce_srv else 'client')
        lines.append('  capture ' + cap.summary(host.pcap, res_cap))
        lines.append('  CM ' + summary)
        lines += ['    ' + p for p in probs + cm_probs]
        ok = not probs and not cm_probs
    hrole = 'server' if uroce_srv else 'client'
    grole = 'client' if uroce_srv else 'server'
    print('%s %s [%s] (uroce %s, rxe %s)' % (
        'ok  ' if ok else 'FAIL', case.name, direction, res[hrole][0],
        res[grole][0]))
    if lines:
        print('\n'.join(lines))
    finish_case(a, g, ok, host.pcap, (sargs if uroce_srv else cargs,
                                      res[hrole][1]),
                (cargs if uroce_srv else sargs, res[grole][1]))
    return bool(ok)


def load_capture_checker():
    try:
        import check_capture
    except SystemExit:
        print('SKIP capture checks: scapy is not available')
        return None
    if not check_capture.tools_present():
        print('SKIP capture checks: tshark is not installed')
        return None
    return check_capture


def prerequisites():
    if os.geteuid() != 0:
        return 'needs root (a network namespace and a tap)'
    for t in ('qemu-system-x86_64', 'ip'):
        if shutil.which(t) is None:
            return '%s is not installed (apt-get install qemu-system-x86 ' \
                'iproute2)' % t
    if not os.path.exists('/dev/net/tun'):
        return 'no /dev/net/tun'
    return None


def run_groups(a, kernel, initrd, groups, cap, results):
    idx = 0
    with vm.Guest(kernel, initrd) as g:
        print('guest up in %.1f s (TCG)' % g.boot_seconds)
        g.check(GUEST_SETUP)
        gids = a.gids = rxe_gids(g)
        print('rxe0 RoCE v2 GIDs: %s' % gids)
        for grp in groups:
            if not CASES[grp]:
                print('SKIP group %s: no cases yet' % grp)
                continue
            if grp.startswith('loss'):
                g.check(LOSS_ON)
            for case in CASES[grp]:
                for direction in a.direction or ['rxe-server',
                                                 'uroce-server']:
                    idx += 1
                    if a.only and not re.search(a.only, case.name) or \
                            a.core and not case.core or \
                            case.direction not in (None, direction):
                        continue
                    if case.gid not in gids:
                        print('FAIL %s: rxe0 has no %s GID' %
                              (case.name, case.gid))
                        results.append(False)
                        continue
                    run = run_cm_case if grp == 'rdmacm' else run_case
                    results.append(run(a, g, cap, idx, case, direction))
            if grp.startswith('loss'):
                g.check(LOSS_OFF)


def skip(why):
    """The exit status for a missing prerequisite: skip, but fail under CI
    (CI=true), where quickstart.sh has installed all the suite needs."""
    print('SKIP: ' + why)
    return 1 if os.environ.get('CI') == 'true' else SKIP


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--run', required=True, help='the uroce-run executable')
    ap.add_argument('--group', action='append',
                    choices=sorted(CASES) + ['core', 'all'],
                    help='case groups (default: core)')
    ap.add_argument('--only', help='run the cases whose name matches')
    ap.add_argument('--direction', choices=('rxe-server', 'uroce-server'),
                    action='append', help='default: both')
    ap.add_argument('--cache', default=guest_build.DEFAULT_CACHE,
                    help='where the guest is built and kept')
    ap.add_argument('--timeout', type=float, default=180,
                    help='seconds per case')
    ap.add_argument('--keep-captures', action='store_true')
    ap.add_argument('--cm-gate', help='cm_gate.c\'s module: perftest -R '
                    'clients on the host wait for the guest\'s listener')
    a = ap.parse_args()
    a.run = os.path.abspath(a.run)
    a.cm_gate = a.cm_gate and os.path.abspath(a.cm_gate)
    why = prerequisites()
    if why:
        return skip(why)
    try:
        kernel, initrd = guest_build.build(a.cache)
    except guest_build.Missing as e:
        return skip(str(e))
    a.core = a.group is None or 'core' in a.group
    groups = GROUPS if a.core or 'all' in a.group else \
        [grp for grp in GROUPS + ['loss-read'] if grp in a.group]
    cap = load_capture_checker()
    a.capture_dir = tempfile.mkdtemp(prefix='uroce-interop-cap-')
    a.conf = os.path.join(a.capture_dir, 'uroce.conf')
    uroce_conf(a.conf)
    results = []
    try:
        run_groups(a, kernel, initrd, groups, cap, results)
    except vm.GuestError as e:
        print('FAIL: %s' % e)
        results.append(False)
    finally:
        if a.keep_captures:
            print('captures in %s' % a.capture_dir)
        else:
            shutil.rmtree(a.capture_dir, ignore_errors=True)
    failed = results.count(False)
    print('%d passed, %d failed' % (results.count(True), failed))
    if not results:
        return SKIP
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
