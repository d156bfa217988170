#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The uroce authors
"""Unmodified verbs programs, two processes on a link pair.

Each case runs a server under `uroce-run -c A.conf` and, once the server
listens on its TCP port, a client under `uroce-run -c B.conf` that
connects to it, as the tools exchange their addresses. Two links:

  --link memif  the memif pair (config/memif-*.conf), TCP over loopback;
  --link afp    af_packet ports on a veth pair between two network
                namespaces created here (config/af_packet-*.conf, root
                only, else skipped), TCP between the veths' kernel
                addresses.

perftest runs on afp only: it gives up unless the port is ACTIVE when it
starts, and a memif server's link is down until its client (the other
perftest process, started after the server listens) connects.

The raw group (afp) runs perftest's raw_ethernet_* tools on RAW_PACKET QPs
and ibv_create_flow: no TCP exchange, each side is told both MACs and IPs
(the uroce addresses of config/af_packet-*.conf, which the kernel does not
own), so the client starts once the server has attached its flow rules:
when the server, run with line-buffered stdout (stdbuf -oL), has printed
its result header, which perftest prints after ibv_create_flow and the
move to RTR. raw_ethernet_bw runs for a fixed duration (-D), as frames
the receiver's af_packet ring drops are never sent again; with
--rate_limit_type=PP (IBV_QP_RATE_LIMIT, N MiB/s) the bandwidth both sides
report must not be above N MiB/s (+5% for perftest's own rounding: an
upper bound, not a timing threshold).
The xrc-clients group (afp) runs `ibv_xsrq_pingpong -c 4`: one server and
four client processes, all four in namespace B on the same veth through
af_packet, each with its own uroce address (192.168.78.11-14, the kernel
owns none of them) and file prefix. The server resolves each client's
address by ARP (af_packet-a.conf names only 192.168.78.2); each client
answers ARP for its own address only and drops RoCEv2 frames to the
others' (the port's not_ours counter). Each process's lcores are pinned
to one CPU, the server and clients alternating, and the pingpongs wait
for completions with -e (sleeping, not polling), so five processes fit a
2-core machine.

A case passes when all its processes exit 0 and their output has what
the tool prints after a completed run (the pingpongs' "iters in",
perftest's result table).

Every run is bounded: each process has a deadline and is killed by its
PID when it passes it. Each run gets its own memif socket name (abstract,
no file) and its own EAL file prefix, given as environment overrides of
the configuration (UROCE_PORT_DEV, UROCE_EAL_ARGS), and the prefix's
runtime directory is removed afterwards. Cases run one after the other:
two processes with one engine lcore each at a time (a 2-core machine).

The net group (--group net): --gid N runs the tools on GID N (1: the IPv6
link-local GID of the MAC, reached by neighbour discovery), --vlan N gives
both ports [port] vlan = N; every RoCEv2 frame captured must then have
the IP version of --expect-ip, the VLAN with the case's sl as PCP (or no
tag), and the DSCP of the case's traffic class with ECN Not-ECT.

Tools that are not installed are skipped with a message (apt-get install
ibverbs-utils perftest); with none of them the script exits 77 (skip).

--capture: both sides write a pcapng (`[port] pcap`, by UROCE_PORT_PCAP)
and a case passes only if each capture passes check_capture.py (tshark
decodes every frame, nothing malformed; every RoCEv2 frame's ICRC
verifies in scapy) and has RoCEv2 frames both ways, no side having
received more than its peers sent (faults only drop). Without tshark or
scapy the captures are not checked, with a message.

UROCE_TEST_PRELOAD (sanitizer builds): the runtime our library needs
inside the uninstrumented tools, preloaded into them.
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

import capture_pool

SKIP = 77
PORT_BASE = 18600
MAC_A = '02:00:00:00:77:01'
MAC_B = '02:00:00:00:77:02'

# (name, tool, server args, client args (before the server's host),
#  what a finished run prints)
PINGPONG_DONE = r'\d+ iters in [0-9.]+ seconds'
PERF_DONE = r'^\s*\d+\s+\d+\s+[0-9.]+\s+[0-9.]+'   # a result row
LAT_DONE = r'^\s*\d+\s+\d+\s+[0-9.]+\s+[0-9.]+\s+[0-9.]+'


def pingpong(tool, extra, name=None, opts=None):
    args = ['-g', '0', '-d', 'uroce0'] + extra
    return (name or '%s %s' % (tool, ' '.join(extra)), tool, args, args,
            PINGPONG_DONE, opts or {})


# ibv_xsrq_pingpong prints "success" once it has torn everything down
# (XRC SRQ, target and initiator QPs, the XRC domain) without an error.
XSRQ_DONE = r'^success$'


def xsrq(extra, clients=1):
    args = ['-g', '0', '-d', 'uroce0'] + extra
    if clients == 1:
        return ('ibv_xsrq_pingpong %s' % ' '.join(extra),
                'ibv_xsrq_pingpong', args, args, XSRQ_DONE)
    # -c N on the server only: each client is one process of its own.
    sargs = args + ['-c', str(clients)]
    return ('ibv_xsrq_pingpong %s (%d client processes)' %
            (' '.join(sargs[4:]), clients), 'ibv_xsrq_pingpong', sargs, args,
            XSRQ_DONE, {'clients': clients})


def perftest(tool, extra, done=PERF_DONE, opts=None):
    args = ['-d', 'uroce0', '-x', '0', '-F'] + extra
    return ('%s %s' % (tool, ' '.join(extra)), tool, args, args, done,
            opts or {})


def with_gid(args, gid):
    """args with the GID index of -g (pingpongs) or -x (perftest) set."""
    out = list(args)
    for i in range(len(out) - 1):
        if out[i] in ('-g', '-x'):
            out[i + 1] = str(gid)
    return out


# raw_ethernet_*: the uroce addresses of config/af_packet-{a,b}.conf (a is
# the server) and the veths' MACs (Veth.MACS). -j/-J name the client's and
# the server's IP on both sides: the server's rule matches them.
RAW_IP = {'a': '192.168.78.1', 'b': '192.168.78.2'}
RAW_READY = r'#bytes\s+#iterations'    # printed after the rules attach


def raw_perftest(tool, extra, done=PERF_DONE, bw_max=None):
    mac = {'a': '02:00:00:00:78:01', 'b': '02:00:00:00:78:02'}

    def side(me, peer, role):
        return ['-d', 'uroce0', '-F', '-B', mac[me], '-E', mac[peer],
                '-j', RAW_IP['b'], '-J', RAW_IP['a'], role] + extra
    return ('%s %s' % (tool, ' '.join(extra)), tool,
            side('a', 'b', '--server'), side('b', 'a', '--client'), done,
            {'raw': True, 'bw_max': bw_max})


CASES = {
    'rc': [
        pingpong('ibv_rc_pingpong', ['-n', '200']),
        pingpong('ibv_rc_pingpong', ['-s', '1', '-n', '200']),
        pingpong('ibv_rc_pingpong', ['-s', '4096', '-n', '100']),
        pingpong('ibv_rc_pingpong', ['-s', '65536', '-n', '50']),
        pingpong('ibv_rc_pingpong', ['-s', '4096', '-n', '100', '-e']),
        pingpong('ibv_rc_pingpong', ['-s', '65536', '-n', '20', '-c']),
        pingpong('ibv_rc_pingpong', ['-s', '4096', '-n', '100', '-N']),
        pingpong('ibv_rc_pingpong', ['-s', '4096', '-n', '50', '-m', '1024']),
    ],
    # Under the port's fault injection: RC retransmits, buffers checked.
    'rc-check': [
        pingpong('ibv_rc_pingpong', ['-s', '1', '-n', '200', '-c']),
        pingpong('ibv_rc_pingpong', ['-s', '4096', '-n', '200', '-c']),
        pingpong('ibv_rc_pingpong', ['-s', '65536', '-n', '50', '-c']),
        pingpong('ibv_rc_pingpong', ['-s', '4096', '-n', '100', '-c',
                                     '-e']),
    ],
    'uc': [
        pingpong('ibv_uc_pingpong', ['-n', '200']),
        pingpong('ibv_uc_pingpong', ['-s', '1', '-n', '200']),
        pingpong('ibv_uc_pingpong', ['-s', '65536', '-n', '50']),
        pingpong('ibv_uc_pingpong', ['-s', '4096', '-n', '100', '-e']),
    ],
    'ud': [
        pingpong('ibv_ud_pingpong', ['-s', '1', '-n', '200']),
        pingpong('ibv_ud_pingpong', ['-s', '1024', '-n', '200']),
        pingpong('ibv_ud_pingpong', ['-s', '1024', '-n', '100', '-e']),
    ],
    # Receives from one SRQ shared by -q QPs (default 16, rx-depth 500).
    'srq': [
        pingpong('ibv_srq_pingpong', ['-n', '200']),
        pingpong('ibv_srq_pingpong', ['-q', '16', '-s', '1', '-n', '200']),
        pingpong('ibv_srq_pingpong', ['-q', '4', '-s', '65536', '-n', '20']),
        pingpong('ibv_srq_pingpong', ['-n', '100', '-e']),
    ],
    # XRC: XRC_SEND -> XRC_RECV -> the XRC SRQ each message names, both
    # ways (each side is initiator and target), 1 B to 8 MTUs.
    'xrc': [
        xsrq(['-n', '50']),
        xsrq(['-s', '1', '-n', '100']),
        xsrq(['-s', '8192', '-n', '50']),
        xsrq(['-s', '4096', '-n', '50', '-e']),
    ],
    # afp only: a server and 4 client processes sharing one veth (above).
    'xrc-clients': [
        xsrq(['-n', '20', '-e'], clients=4),
        xsrq(['-s', '4096', '-n', '10', '-e'], clients=4),
    ],
    'perf': [
        perftest('ib_send_bw', ['-n', '200', '-s', '4096']),
        perftest('ib_write_bw', ['-n', '200', '-s', '65536']),
        perftest('ib_read_bw', ['-n', '200', '-s', '65536']),
        perftest('ib_send_lat', ['-n', '200', '-s', '64'], LAT_DONE),
        perftest('ib_write_lat', ['-n', '200', '-s', '64'], LAT_DONE),
        perftest('ib_read_lat', ['-n', '200', '-s', '64'], LAT_DONE),
        perftest('ib_atomic_bw', ['-n', '200']),
        perftest('ib_atomic_lat', ['-n', '200'], LAT_DONE),
    ],
    # afp only (no TCP, see above); RAW_PACKET QPs, flow steering, pacing.
    'raw': [
        raw_perftest('raw_ethernet_bw', ['-D', '2']),
        raw_perftest('raw_ethernet_lat', ['-n', '1000'], LAT_DONE),
        raw_perftest('raw_ethernet_bw', ['-D', '2', '--rate_limit=10',
                                         '--rate_units=M',
                                         '--rate_limit_type=PP'],
                     bw_max=10),
    ],
}
# The net group: a service level and a traffic class on every
# tool that takes them; run with --gid (an IPv6 GID) and --vlan, each
# capture must then show the sl as 802.1Q PCP (sl & 7) and the traffic
# class's DSCP with ECN Not-ECT (107 = DSCP 26 + ECN CE asked for).
CASES['net'] = [
    pingpong('ibv_rc_pingpong', ['-n', '200', '-l', '5'],
             opts={'sl': 5, 'dscp': 0}),
    pingpong('ibv_rc_pingpong', ['-s', '65536', '-n', '20', '-c', '-l', '3'],
             opts={'sl': 3, 'dscp': 0}),
    pingpong('ibv_ud_pingpong', ['-s', '1024', '-n', '100', '-l', '6'],
             opts={'sl': 6, 'dscp': 0}),
    perftest('ib_write_bw', ['-n', '200', '-s', '65536', '-S', '5',
                             '--tclass', '107'],
             opts={'sl': 5, 'dscp': 26}),
    perftest('ib_send_lat', ['-n', '200', '-s', '64', '-S', '2',
                             '--tclass', '46'], LAT_DONE,
             opts={'sl': 2, 'dscp': 11}),
]

# Groups that need the afp link (no TCP exchange to sync on over memif).
AFP_ONLY = {'raw', 'xrc-clients'}
# The clients' uroce addresses in the xrc-clients group (192.168.78.2 is
# af_packet-b.conf's own, a static neighbour of the server: not used).
# Groups that run only when named (--group): their own meson test.
NAMED_ONLY = {'xrc-clients'}
CLIENT_IP = '192.168.78.%d'
CLIENT_IP_BASE = 11
# Groups the default (no --group) afp run leaves out: they run on memif.
MEMIF_DEFAULT = {'srq'}


def tool_cmd(tool, line_buffered=False):
    cmd = ['stdbuf', '-oL', tool] if line_buffered else [tool]
    pre = os.environ.get('UROCE_TEST_PRELOAD')
    if pre:
        return ['env', 'LD_PRELOAD=' + pre, 'ASAN_OPTIONS=detect_leaks=0'] \
            + cmd
    return cmd


def listening(port):
    """Whether a TCP socket listens on port (from /proc, without
    connecting: the tools accept exactly one connection)."""
    for f in ('/proc/net/tcp', '/proc/net/tcp6'):
        try:
            with open(f) as fh:
                next(fh)
                for line in fh:
                    col = line.split()
                    if col[3] == '0A' and \
                            int(col[1].rsplit(':', 1)[1], 16) == port:
                        return True
        except OSError:
            pass
    return False


class Pair:
    """The processes of one case: side 'a' (the server) and 'b' (the
    client), or with clients > 1 'b0', 'b1'...: client processes on side
    b's link, each with its own uroce address and pinned CPU."""

    def __init__(self, args, tag, veth, clients=1):
        self.a = args
        self.tag = tag
        self.veth = veth
        self.clients = ['b'] if clients == 1 else \
            ['b%d' % i for i in range(clients)]
        self.sides = ['a'] + self.clients
        self.prefix = {s: 'uroce-conf-%s-%s' % (s, tag) for s in self.sides}
        self.pcap = {s: os.path.join(args.capture_dir, '%s-%s.pcapng' %
                                     (tag, s))
                     for s in self.sides} if args.capture_dir else None

    def env(self, side, conf):
        e = dict(os.environ)
        role = 'server' if side == 'a' else 'client'
        mac = MAC_A if side == 'a' else MAC_B
        eal = '--no-pci --no-huge -m 256'
        if self.veth:
            e['UROCE_PORT_DEV'] = ('net_af_packet0,iface=%s,qdisc_bypass=1'
                                   % self.veth.ifname[side[0]])
        else:
            e['UROCE_PORT_DEV'] = ('net_memif0,role=%s,id=0,socket='
                                   '/run/uroce/conf-%s.sock,mac=%s'
                                   % (role, self.tag, mac))
            # The client starts once the server listens: the server's
            # open must not wait for it (its link comes up when it
            # connects), nor a client's for a link it will not use yet.
            e['UROCE_PORT_LINK_WAIT'] = '0'
        if len(self.clients) > 1:
            # Both lcores (main, engine) of a process on one CPU: the
            # server on the last, the clients alternating from the first.
            cpu = (os.cpu_count() or 1) - 1 if side == 'a' else \
                int(side[1:]) % (os.cpu_count() or 1)
            eal += ' --lcores=(0-1)@%d' % cpu
            if side != 'a':
                e['UROCE_PORT_IP'] = CLIENT_IP % (CLIENT_IP_BASE +
                                                  int(side[1:])) + '/24'
        e['UROCE_EAL_ARGS'] = ('%s --file-prefix=%s --log-level=*:warning'
                               % (eal, self.prefix[side]))
        if self.a.fault:
            e['UROCE_PORT_FAULT'] = self.a.fault
        if getattr(self.a, 'vlan', None) is not None:
            e['UROCE_PORT_VLAN'] = str(self.a.vlan)
        if self.pcap:
            e['UROCE_PORT_PCAP'] = self.pcap[side]
        return e

    def start(self, side, tool, targs, line_buffered=False):
        conf = self.a.conf_a if side == 'a' else self.a.conf_b
        cmd = [self.a.run, '-c', conf, '--'] + \
            tool_cmd(tool, line_buffered) + targs
        if self.veth:
            cmd = ['ip', 'netns', 'exec', self.veth.ns[side[0]]] + cmd
        out = tempfile.TemporaryFile(mode='w+')
        p = subprocess.Popen(cmd, env=self.env(side, conf), stdout=out,
                             stderr=subprocess.STDOUT,
                             stdin=subprocess.DEVNULL)
        return p, out

    def cleanup(self):
        for pfx in self.prefix.values():
            shutil.rmtree(os.path.join('/var/run/dpdk', pfx),
                          ignore_errors=True)

    def check_captures(self, cap, raw=False, expect=None):
        """(ok, report lines) for the captures of a finished run. The
        capture holds RoCEv2 frames only (lib/net/pcap.c): a raw run's
        files must be clean and hold no RoCEv2 at all. The server's peers
        are all the clients, a client's peer is the server. expect: header
        fields of every RoCEv2 frame (check_capture.check())."""
        res = dict(zip(self.sides, capture_pool.starmap(
            cap.check, [(self.pcap[s], expect) for s in self.sides])))
        lines, ok = [], True
        for s in self.sides:
            peers = self.clients if s == 'a' else ['a']
            peer_out = sum(res[p]['roce']['out'] for p in peers)
            r = res[s]
            lines.append('  capture ' + cap.summary(self.pcap[s], r))
            probs = list(r['problems'])
            if raw:
                if r['roce']['out'] or r['roce']['in']:
                    probs.append('RoCEv2 frames in a raw Ethernet run')
            elif r['roce']['out'] == 0 or r['roce']['in'] == 0:
                probs.append('no RoCEv2 frame one way')
            if r['roce']['in'] > peer_out:
                probs.append('received %d RoCEv2 frames, the peers sent %d'
                             % (r['roce']['in'], peer_out))
            lines += ['    ' + p for p in probs]
            ok = ok and not probs
        if len(self.clients) > 1:
            more = self.check_addresses(cap)
            lines += ['    ' + p for p in more]
            ok = ok and not more
        if ok and not self.a.keep_captures:
            for f in self.pcap.values():
                os.unlink(f)
        if not ok:
            self.a.keep_captures = True
            lines.append('  captures kept in ' + self.a.capture_dir)
        return ok, lines


    def check_addresses(self, cap):
        """Problems of a shared link: a client's port must have taken only
        the RoCEv2 frames to its own address (others' are not_ours), and
        no more of them than the server sent there."""
        to = roce_dsts(cap, self.pcap['a'], 'out')
        probs = []
        for s in self.clients:
            ip = CLIENT_IP % (CLIENT_IP_BASE + int(s[1:]))
            got = roce_dsts(cap, self.pcap[s], 'in')
            for dst, n in sorted(got.items()):
                if dst != ip:
                    probs.append('%s (%s) took %d RoCEv2 frames to %s'
                                 % (s, ip, n, dst))
            if got[ip] > to[ip] or got[ip] == 0:
                probs.append('%s (%s) took %d RoCEv2 frames, the server '
                             'sent it %d' % (s, ip, got[ip], to[ip]))
        return probs


def roce_dsts(cap, path, direction):
    """Counter of the IPv4 destinations of path's RoCEv2 frames that went
    direction ('in' or 'out')."""
    n = collections.Counter()
    for frame, d in cap.read_pcapng(path):
        r = cap.roce_opcode(frame)
        if r is not None and d == direction and r[2] == 4:
            n['.'.join(str(b) for b in frame[r[1] + 16:r[1] + 20])] += 1
    return n


class Veth:
    """Two namespaces joined by a veth pair, removed by close(). The MACs
    are the ones config/af_packet-*.conf name in [neigh]; the kernel
    addresses carry the tools' TCP exchange."""
    MACS = {'a': '02:00:00:00:78:01', 'b': '02:00:00:00:78:02'}
    KADDR = {'a': '10.78.0.1', 'b': '10.78.0.2'}

    def __init__(self):
        tag = 'uc%d' % os.getpid()
        self.ns = {'a': tag + '-a', 'b': tag + '-b'}
        self.ifname = {'a': tag + 'a', 'b': tag + 'b'}
        self.server = self.KADDR['a']

    def ip(self, *args):
        subprocess.run(['ip'] + list(args), check=True, timeout=30,
                       stdout=subprocess.DEVNULL)

    def open(self):
        for s in 'ab':
            self.ip('netns', 'add', self.ns[s])
        self.ip('-n', self.ns['a'], 'link', 'add', self.ifname['a'],
                'address', self.MACS['a'], 'type', 'veth', 'peer', 'name',
                self.ifname['b'], 'netns', self.ns['b'], 'address',
                self.MACS['b'])
        for s in 'ab':
            subprocess.run(['ip', 'netns', 'exec', self.ns[s], 'sysctl',
                            '-qw', 'net.ipv6.conf.all.disable_ipv6=1'],
                           timeout=30)
            self.ip('-n', self.ns[s], 'link', 'set', 'lo', 'up')
            self.ip('-n', self.ns[s], 'link', 'set', self.ifname[s], 'up')
            self.ip('-n', self.ns[s], 'addr', 'add', self.KADDR[s] + '/24',
                    'dev', self.ifname[s])

    def close(self):
        for s in 'ab':
            subprocess.run(['ip', 'netns', 'del', self.ns[s]], timeout=30,
                           stderr=subprocess.DEVNULL)

    def listening(self, port):
        out = subprocess.run(['ip', 'netns', 'exec', self.ns['a'], 'cat',
                              '/proc/net/tcp'], capture_output=True,
                             text=True, timeout=30).stdout
        for line in out.splitlines()[1:]:
            col = line.split()
            if col[3] == '0A' and int(col[1].rsplit(':', 1)[1], 16) == port:
                return True
        return False


def finish(p, deadline):
    """Wait for p until deadline; past it, kill it by its PID."""
    try:
        return p.wait(timeout=max(0.1, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        os.kill(p.pid, signal.SIGKILL)
        p.wait()
        return 'timeout'


def output(f):
    f.seek(0)
    return f.read()


def server_ready(srv, sout, ready, deadline):
    """Wait until the server's output matches ready (it is running)."""
    while srv.poll() is None and time.monotonic() < deadline:
        if re.search(ready, output(sout)):
            return True
        time.sleep(0.05)
    return bool(re.search(ready, output(sout)))


def bw_rows(text):
    """BW average [MiB/s] of each perftest result row."""
    return [float(m.group(1)) for m in
            re.finditer(r'^\s*\d+\s+\d+\s+[0-9.]+\s+([0-9.]+)', text, re.M)]


def start_pair(a, pair, tool, sargs, cargs, port, veth, raw, deadline):
    """Start the server, then the clients once the server is ready, and
    wait for the clients.
    @return (server, its output, clients: [side, process, output, rc]);
    with no client started, one entry whose rc says why."""
    if raw:
        srv, sout = pair.start('a', tool, sargs, line_buffered=True)
        if not server_ready(srv, sout, RAW_READY, deadline):
            return srv, sout, [['b', None, None,
                                'not started (server not ready)']]
        cli, cout = pair.start('b', tool, cargs)
        return srv, sout, [['b', cli, cout, finish(cli, deadline)]]
    listens = veth.listening if veth else listening
    srv, sout = pair.start('a', tool, sargs + ['-p', str(port)])
    while not listens(port) and srv.poll() is None and \
            time.monotonic() < deadline:
        time.sleep(0.05)
    if not listens(port):
        return srv, sout, [['b', None, None,
                            'not started (server never listened)']]
    # The server accepts its clients one after the other: all start now.
    clis = [[side, *pair.start(side, tool, cargs + [
        '-p', str(port), veth.server if veth else '127.0.0.1']), None]
        for side in pair.clients]
    for c in clis:
        c[3] = finish(c[1], deadline)
    return srv, sout, clis


def case_expect(a, opts):
    """The header fields every RoCEv2 frame of the case must have: the IP
    version of --gid, the VLAN of --vlan with the case's sl as PCP, the
    case's DSCP with ECN Not-ECT."""
    exp = {}
    if a.expect_ip:
        exp['ip'] = a.expect_ip
    if 'sl' in opts:
        exp['vid'] = a.vlan
        exp['pcp'] = opts['sl'] & 7 if a.vlan is not None else None
    if 'dscp' in opts:
        exp['dscp'] = opts['dscp']
        exp['ecn'] = 0
    return exp


def run_case(a, idx, case, veth, cap=None):
    name, tool, sargs, cargs, done = case[:5]
    opts = case[5] if len(case) > 5 else {}
    sargs, cargs = with_gid(sargs, a.gid), with_gid(cargs, a.gid)
    raw = opts.get('raw', False)
    if shutil.which(tool) is None:
        print('SKIP %s: %s not installed' % (name, tool))
        return None
    if (raw or opts.get('clients', 1) > 1) and veth is None:
        print('SKIP %s: runs on the afp link only' % name)
        return None
    port = PORT_BASE + idx
    pair = Pair(a, '%d-%d' % (os.getpid(), idx), veth,
                opts.get('clients', 1))
    deadline = time.monotonic() + a.timeout
    srv, clis = None, []
    try:
        srv, sout, clis = start_pair(a, pair, tool, sargs, cargs, port,
                                     veth, raw, deadline)
        crc = next((c[3] for c in clis if c[3] != 0), 0)
        src = finish(srv, deadline if crc == 0 else time.monotonic() + 2)
    finally:
        for p in [srv] + [c[1] for c in clis]:
            if p is not None and p.poll() is None:
                os.kill(p.pid, signal.SIGKILL)
                p.wait()
        pair.cleanup()
    so = output(sout)
    couts = [output(c[2]) if c[2] else '' for c in clis]
    co = couts[0]
    # perftest's latency servers print no result table: only the client.
    ok = src == 0 and crc == 0 and \
        all(re.search(done, o, re.M) for o in couts) and \
        (re.search(done, so, re.M) or '_lat' in tool)
    cap_lines = []
    if ok and opts.get('bw_max') is not None:
        # Paced: what either side reports stays under the limit.
        bws = bw_rows(co) + bw_rows(so)
        top = opts['bw_max'] * 1.05
        cap_lines.append('  reported BW %s MiB/s, limit %s' %
                         (bws, opts['bw_max']))
        if not bws or max(bws) > top:
            ok = False
            cap_lines.append('  reported bandwidth above %.2f MiB/s' % top)
    if ok and cap is not None:
        ok, more = pair.check_captures(cap, raw, case_expect(a, opts))
        cap_lines += more
    print('%s %s (server %s, client%s %s)' % (
        'ok  ' if ok else 'FAIL', name, src, 's' if len(clis) > 1 else '',
        ', '.join(str(c[3]) for c in clis)))
    if cap_lines and (not ok or a.verbose):
        print('\n'.join(cap_lines))
    if not ok or a.verbose:
        print('---- server: %s\n%s' % (' '.join(sargs), so) +
              ''.join('---- client %s:\n%s' % (c[0], o)
                      for c, o in zip(clis, couts)) + '----')
    return bool(ok)


def load_capture_checker():
    """check_capture.py, or None (with a message) without tshark/scapy."""
    try:
        import check_capture
    except SystemExit:          # crosscheck_scapy: no scapy
        print('SKIP capture checks: scapy is not available')
        return None
    if not check_capture.tools_present():
        print('SKIP capture checks: tshark is not installed')
        return None
    return check_capture


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--run', required=True, help='the uroce-run executable')
    ap.add_argument('--link', choices=('memif', 'afp'), default='memif')
    ap.add_argument('--conf-a', required=True,
                    help='config/memif-a.conf or af_packet-a.conf')
    ap.add_argument('--conf-b', required=True,
                    help='config/memif-b.conf or af_packet-b.conf')
    ap.add_argument('--group', action='append', choices=sorted(CASES),
                    help='case groups to run (default: all)')
    ap.add_argument('--only', help='run the cases whose name matches')
    ap.add_argument('--fault', help='UROCE_PORT_FAULT for both sides')
    ap.add_argument('--gid', type=int, default=0,
                    help='GID index for the tools (-g, -x); default 0')
    ap.add_argument('--expect-ip', type=int, choices=(4, 6),
                    help='IP version every RoCEv2 frame must have')
    ap.add_argument('--vlan', type=int,
                    help='[port] vlan of both sides (UROCE_PORT_VLAN)')
    ap.add_argument('--timeout', type=float, default=60,
                    help='seconds per case')
    ap.add_argument('--capture', action='store_true',
                    help='capture both ports and check the captures')
    ap.add_argument('--keep-captures', action='store_true',
                    help='keep the capture files (printed with -v)')
    ap.add_argument('-v', '--verbose', action='store_true')
    a = ap.parse_args()
    a.run = os.path.abspath(a.run)
    a.conf_a = os.path.abspath(a.conf_a)
    a.conf_b = os.path.abspath(a.conf_b)
    a.capture_dir = None
    cap = load_capture_checker() if a.capture else None
    if cap is not None:
        a.capture_dir = tempfile.mkdtemp(prefix='uroce-capture-')
    veth = None
    if a.link == 'afp':
        if os.geteuid() != 0 or shutil.which('ip') is None:
            print('SKIP: af_packet pair needs root and ip(8) for its '
                  'network namespaces')
            return SKIP
        veth = Veth()
    results = []
    idx = 0
    try:
        if veth:
            veth.open()
        groups = a.group or [g for g in sorted(CASES)
                             if (veth or g not in AFP_ONLY) and
                             not (veth and g in MEMIF_DEFAULT) and
                             g not in NAMED_ONLY]
        for g in groups:
            for case in CASES[g]:
                idx += 1
                if a.only and not re.search(a.only, case[0]):
                    continue
                results.append(run_case(a, idx, case, veth, cap))
    finally:
        capture_pool.close()
        if veth:
            veth.close()
        if a.capture_dir and not a.keep_captures:
            shutil.rmtree(a.capture_dir, ignore_errors=True)
        elif a.capture_dir:
            print('captures in %s' % a.capture_dir)
    ran = [r for r in results if r is not None]
    failed = ran.count(False)
    print('%d passed, %d failed, %d skipped' %
          (ran.count(True), failed, len(results) - len(ran)))
    if not ran:
        return SKIP
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
