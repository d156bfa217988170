#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The uroce authors
"""Defaults a new user relies on, with configs that hold only [port] dev
and ip (no [eal]: DPDK with hugepages and the per-process file prefix):

  pair         ibv_rc_pingpong -c over a memif pair, the two processes at
               once: both succeed; while they run, EAL's runtime dir is
               /var/run/dpdk/uroce-<pid>; after a clean exit no such dir
               and no uroce-<pid>map_* hugepage file is left.
  client-first the memif client starts first, its server a few seconds
               later (the tool's server is the memif client, since the
               tool's TCP client does not retry): both succeed.
  refused      the memif client's first connection is refused, as a
               server that has not started its port yet refuses it (a
               stand-in socket answers HELLO, reads the INIT and answers
               DISCONNECT "ID not found", then goes away); the real
               server starts a second later: both succeed.
  perftest     ib_write_bw with its server on the memif server side,
               started first, the client a few seconds later: both
               succeed, the server does not find its port Down.
  quiet        uroce-run without -v prints no "EAL:" line, with -v it
               does; a port without a peer and link_wait = 0 is PORT_DOWN.

With memif, each side's open waits for the other's, so the tool's TCP
client may reach the server before it listens ("Couldn't connect to"):
that client is run again (a memif server takes a new client, and a memif
client connects to each new server), or in client-first the pair is run
again; at most ATTEMPTS times. Any other failure fails at once.

  check_defaults.py --run UROCE_RUN CASE...
Exit 0 pass, 1 fail, 77 when a tool is missing.
"""

import argparse
import glob
import os
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import time

SKIP = 77
ATTEMPTS = 4
RUN_DIR = '/var/run/dpdk'
TCP_RACE = "Couldn't connect to"
TIMEOUT = 120
# memif's control messages (DPDK drivers/net/memif/memif.h): 128 bytes,
# a 16-bit type, then the type's fields, packed, little-endian here.
MEMIF_MSG_LEN = 128
MEMIF_HELLO, MEMIF_INIT, MEMIF_DISCONNECT = 2, 3, 8
MEMIF_VERSION = 0x0200


def free_port():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


# The progress mode is the test's, not a config's: kept (the test runs in
# both, as <name> and <name>_inline).
KEEP_ENV = ('UROCE_EAL_LCORES',)


def clean_env():
    """The environment without uroce overrides but the progress mode: the
    configs say the rest."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith('UROCE_') or k in KEEP_ENV}
    return env


def wrap(cmd):
    """The tool's command line; in a sanitizer build with the runtime our
    library needs preloaded into the uninstrumented tool (never into
    uroce-run, which carries its own)."""
    pre = os.environ.get('UROCE_TEST_PRELOAD')
    if pre:
        return ['env', 'LD_PRELOAD=' + pre, 'ASAN_OPTIONS=detect_leaks=0'] \
            + cmd
    return cmd


class Case:
    def __init__(self, run, tmp):
        self.run = run
        self.tmp = tmp
        self.sock = os.path.join(tmp, 'memif.sock')
        self.conf = {}
        for side, role, ip in (('a', 'server', 1), ('b', 'client', 2)):
            path = os.path.join(tmp, side + '.conf')
            with open(path, 'w') as f:
                f.write('[port]\ndev = net_memif0,role=%s,socket=%s\n'
                        'ip = 192.168.93.%d/24\n' % (role, self.sock, ip))
            self.conf[side] = path
        self.pids = []
        self.fails = []

    def start(self, side, tool, extra_env=None):
        env = clean_env()
        env.update(extra_env or {})
        out = open(os.path.join(self.tmp, 'out-%d' % len(self.pids)), 'w+')
        p = subprocess.Popen([self.run, '-c', self.conf[side], '--']
                             + wrap(tool), stdout=out,
                             stderr=subprocess.STDOUT, env=env)
        p.out = out
        self.pids.append(p.pid)
        return p

    @staticmethod
    def finish(p):
        try:
            p.wait(TIMEOUT)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
        p.out.seek(0)
        return p.returncode, p.out.read()

    def stop(self, p):
        """Kill p: its exit handlers do not run, so its prefix's files stay
        until the next engine start removes them (not checked here)."""
        if p.poll() is None:
            p.kill()
            self.pids.remove(p.pid)
        return self.finish(p)

    def fail(self, what, out=''):
        self.fails.append(what)
        sys.stdout.write('FAIL: %s\n%s\n' % (what, out))

    def check_leftovers(self):
        """No runtime dir or hugepage file of a prefix this case made."""
        for pid in self.pids:
            pre = 'uroce-%d' % pid
            if os.path.exists(os.path.join(RUN_DIR, pre)):
                self.fail('%s/%s left behind' % (RUN_DIR, pre))
            left = glob.glob('/dev/hugepages/%smap_*' % pre)
            if left:
                self.fail('hugepage files left behind: %s' % left[:3])


def pingpong(port, server=None):
    cmd = ['ibv_rc_pingpong', '-g', '0', '-d', 'uroce0', '-p', str(port),
           '-n', '200', '-c']
    return cmd + ([server] if server else [])


def good_pingpong(c, name, rc, out):
    if rc != 0 or 'remote address' not in out or 'iters in' not in out:
        c.fail('%s: exit %s' % (name, rc), out)
        return False
    return True


def case_pair(c):
    """Tool server on the memif server, client a second later."""
    port = free_port()
    srv = c.start('a', pingpong(port))
    # The default prefix: EAL's runtime dir is uroce-<pid> while it runs.
    seen = False
    for _ in range(200):
        if os.path.isdir(os.path.join(RUN_DIR, 'uroce-%d' % srv.pid)):
            seen = True
            break
        if srv.poll() is not None:
            break
        time.sleep(0.05)
    if not seen:
        c.fail('no %s/uroce-%d while the server runs' % (RUN_DIR, srv.pid))
    for attempt in range(ATTEMPTS):
        cli = c.start('b', pingpong(port, '127.0.0.1'))
        rc, out = c.finish(cli)
        if rc == 0 or TCP_RACE not in out:
            break
        time.sleep(0.5)
    good_pingpong(c, 'client', rc, out)
    rc, sout = c.finish(srv) if rc == 0 else c.stop(srv)
    good_pingpong(c, 'server', rc, sout)
    c.check_leftovers()


def case_client_first(c):
    """The memif client (the tool's server) first, its server 2 s later."""
    for attempt in range(ATTEMPTS):
        port = free_port()
        srv = c.start('b', pingpong(port))
        time.sleep(2)
        if srv.poll() is not None:
            rc, out = c.finish(srv)
            c.fail('the memif client exited before its server came '
                   '(exit %s)' % rc, out)
            return
        cli = c.start('a', pingpong(port, '127.0.0.1'))
        rc, out = c.finish(cli)
        if rc != 0 and TCP_RACE in out and attempt + 1 < ATTEMPTS:
            c.stop(srv)
            continue
        good_pingpong(c, 'client (memif server)', rc, out)
        rc, sout = c.finish(srv) if rc == 0 else c.stop(srv)
        good_pingpong(c, 'server (memif client)', rc, sout)
        break
    c.check_leftovers()


def memif_msg(mtype, fmt, *fields):
    return (struct.pack('<H' + fmt, mtype, *fields)
            .ljust(MEMIF_MSG_LEN, b'\0'))


def refuse_once(path, proc):
    """Listen on path (an abstract address: memif's default), answer one
    client's INIT as a memif server whose port has not started does, then
    stop listening. Whether an INIT came."""
    lst = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    lst.bind('\0' + path)
    lst.listen(1)
    lst.settimeout(1)
    conn = None
    try:
        while conn is None and proc.poll() is None:
            try:
                conn, _ = lst.accept()
            except socket.timeout:
                pass
    finally:
        lst.close()
    if conn is None:
        return False
    with conn:
        conn.settimeout(TIMEOUT)
        # name, versions, max region, max s2c and c2s rings, max log2 size
        conn.send(memif_msg(MEMIF_HELLO, '32sHHHHHB', b'stand-in',
                            MEMIF_VERSION, MEMIF_VERSION, 255, 255, 255, 14))
        init = conn.recv(MEMIF_MSG_LEN)
        if len(init) != MEMIF_MSG_LEN or \
                struct.unpack_from('<H', init)[0] != MEMIF_INIT:
            return False
        conn.send(memif_msg(MEMIF_DISCONNECT, 'I96s', 0, b'ID not found'))
    return True


def case_refused(c):
    """The memif client (the tool's server) refused once, then its server."""
    port = free_port()
    srv = c.start('b', pingpong(port))
    if not refuse_once(c.sock, srv):
        rc, out = c.stop(srv)
        c.fail('the memif client sent no INIT to the stand-in (exit %s)'
               % rc, out)
        return
    time.sleep(1)
    for attempt in range(ATTEMPTS):
        # A new memif server each time: the client connects again.
        cli = c.start('a', pingpong(port, '127.0.0.1'))
        rc, out = c.finish(cli)
        if rc == 0 or TCP_RACE not in out:
            break
        time.sleep(0.5)
    good_pingpong(c, 'client (memif server)', rc, out)
    rc, sout = c.finish(srv) if rc == 0 else c.stop(srv)
    good_pingpong(c, 'server (memif client)', rc, sout)
    c.check_leftovers()


def case_perftest(c):
    """ib_write_bw: server on the memif server first, client 3 s later."""
    port = free_port()
    tool = ['ib_write_bw', '-d', 'uroce0', '-x', '0', '-F', '-s', '4096',
            '-n', '500', '-p', str(port)]
    srv = c.start('a', tool)
    time.sleep(3)
    if srv.poll() is not None:
        rc, out = c.finish(srv)
        c.fail('ib_write_bw server exited before its client came '
               '(exit %s)' % rc, out)
        return
    for attempt in range(ATTEMPTS):
        cli = c.start('b', tool + ['127.0.0.1'])
        rc, out = c.finish(cli)
        if rc == 0 or TCP_RACE not in out:
            break
        time.sleep(0.5)
    ok = rc == 0 and 'BW average' in out
    if not ok:
        c.fail('ib_write_bw client: exit %s' % rc, out)
    rc, sout = c.finish(srv) if ok else c.stop(srv)
    if rc != 0 or 'state is Down' in sout or 'BW average' not in sout:
        c.fail('ib_write_bw server: exit %s' % rc, sout)
    c.check_leftovers()


def case_quiet(c):
    """No EAL start-up lines unless -v; a lone port is PORT_DOWN."""
    env = {'UROCE_PORT_LINK_WAIT': '0'}
    for verbose in (False, True):
        tool = ['ibv_devinfo', '-d', 'uroce0']
        p = c.start('a', tool, env) if not verbose else None
        if verbose:
            e = clean_env()
            e.update(env)
            out = open(os.path.join(c.tmp, 'out-v'), 'w+')
            p = subprocess.Popen([c.run, '-v', '-c', c.conf['a'], '--']
                                 + wrap(tool), stdout=out,
                                 stderr=subprocess.STDOUT, env=e)
            p.out = out
            c.pids.append(p.pid)
        rc, out = c.finish(p)
        eal = [l for l in out.splitlines() if l.startswith('EAL:')]
        if rc != 0 or 'PORT_DOWN' not in out:
            c.fail('ibv_devinfo%s: exit %s' % (' -v' if verbose else '', rc),
                   out)
        elif verbose and not eal:
            c.fail('uroce-run -v: no "EAL:" line', out)
        elif not verbose and eal:
            c.fail('uroce-run: "EAL:" lines without -v', out)
    c.check_leftovers()


CASES = {
    'pair': case_pair,
    'client-first': case_client_first,
    'refused': case_refused,
    'perftest': case_perftest,
    'quiet': case_quiet,
}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--run', required=True, help='the uroce-run program')
    ap.add_argument('case', nargs='+', choices=sorted(CASES))
    args = ap.parse_args()
    tools = {'pair': 'ibv_rc_pingpong', 'client-first': 'ibv_rc_pingpong',
             'refused': 'ibv_rc_pingpong',
             'perftest': 'ib_write_bw', 'quiet': 'ibv_devinfo'}
    fails = 0
    for name in args.case:
        if shutil.which(tools[name]) is None:
            print('SKIP %s: %s not installed' % (name, tools[name]))
            if len(args.case) == 1:
                return SKIP
            continue
        tmp = tempfile.mkdtemp(prefix='uroce-defaults-')
        try:
            c = Case(os.path.abspath(args.run), tmp)
            CASES[name](c)
            print('%s %s' % ('FAIL' if c.fails else 'ok', name))
            fails += len(c.fails)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return 1 if fails else 0


if __name__ == '__main__':
    sys.exit(main())
