#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The uroce authors
"""An iSER storage target and initiator, unmodified, over the memif pair.

The target is tgt's `tgtd -f` under `uroce-run -c memif-a.conf` (the
memif server): its iSER transport listens through our librdmacm on every
uroce device, port 3260 (the uroce address 192.168.77.1), its iSCSI/TCP
portal only on a free loopback port, its management socket in a scratch
directory (TGT_IPC_SOCKET), so that it meets nothing else on the host.
tgtadm (control path only) makes an iSER target with one file-backed LUN
of 16 MiB, filled with a seeded pseudo-random pattern, open to every
address and to our initiator name (tgt's iSER login checks both ACLs).

The initiator is libiscsi's tools with an iser:// URL, each run under
`uroce-run -c memif-b.conf` as its own process (a connection each):

  - iscsi-inq: the standard INQUIRY of tgt's disk (vendor, product);
  - iscsi-readcapacity16: the LUN's last LBA and block size;
  - iscsi-test-cu ALL.Verify16.Simple: READ16 of 1..256 blocks at both
    ends of the LUN (the target RDMA-writes the pattern to the initiator),
    each sent back with VERIFY16 BYTCHK=1 (the target RDMA-reads it) and
    compared by tgt with the backing file: the data read equals the disk;
  - ALL.Verify16.Mismatch: the same with one byte changed must miscompare
    (the comparison is real);
  - ALL.Write16.Simple: WRITE16 of 1..256 blocks of 0xa6 at both ends;
    the backing file must then hold 0xa6 in its first and last 256
    blocks and the pattern, unchanged, between them;
  - ALL.Verify16.Simple again: what was written, read back and compared.

Every tool must exit 0 and every iscsi-test-cu run report its tests
passed and none failed. Both sides capture: each capture decodes with
nothing malformed (check_capture.check(); tshark alone without scapy),
holds RoCEv2 frames sent, and the CM's REQ, REP and RTU.

--fault F runs both ports with `fault = F` (UROCE_PORT_FAULT): the
connections still form and the data is intact. --cm-ack-timeout N gives
both ports `cm_ack_timeout = N` (UROCE_PORT_CM_ACK_TIMEOUT): libiscsi
1.19's tools fail a command when their poll() of the completion channel
sees nothing for 1 s, and on a lossy link a command can lose two last
packets (a READ's last response, then the SCSI response), each resent
only after the local ACK timeout, 0.54 s by default. --only NAME,...
runs those steps only (in their order), e.g. write16,lun-file,
verify-written: data written, checked in the file, read back and
compared.

The initiator tools run with a heap that hands out zeroed blocks, which
libiscsi 1.19 needs (INITIATOR_HEAP below); --heap-probe PROBE checks it
first with heap_probe.c's program, --heap-probe-only does that alone.

UROCE_TEST_PRELOAD (sanitizer builds): the runtime our libraries need
inside the uninstrumented tools, preloaded into them.

    check_iser.py --run UROCE_RUN --conf-a A --conf-b B [--fault F]
    check_iser.py --heap-probe PROBE --heap-probe-only
Exit 0 pass, 1 fail, 77 when tgt or libiscsi's tools are not installed.
"""

import argparse
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

import check_rdmacm as cm

SKIP = 77
TOOLS = ('tgtd', 'tgtadm', 'iscsi-inq', 'iscsi-readcapacity16',
         'iscsi-test-cu')
IQN = 'iqn.2026-11.org.uroce:iser-target'
INITIATOR = 'iqn.2026-11.uroce:init'
LUN_BYTES = 16 << 20
BLOCK = 512
WRITTEN = 256 * BLOCK           # ALL.Write16.Simple: 256 blocks each end
FILL = 0xa6                     # what it writes
SEED = 36
CONTROL_PORT = 1                # names the socket in our scratch dir only
ISER_PORT = 3260
WANT_CM = ('REQ', 'REP', 'RTU')
READY_GUARD = 60                # s: a guard against a hang, no threshold

# libiscsi 1.19's iSER initiator reads memory malloc() gave it before it
# writes it: iscsi_init_iser_transport() takes its struct iser_conn (4280
# bytes) from malloc(), and a connection's first iser_reg_mr() appends its
# tx descriptors to iser_conn->tx_desc, the struct's last field, as it
# finds it, walking it as a list. A tool that opens a second connection
# (iscsi-test-cu: its set-up's, then the test's) can get the first one's
# freed block back at another offset, where that field holds a pointer
# the first connection left (one of its rx_wr[].next), and its CM thread
# dies of SIGSEGV walking it: the layout of the heap decides, and any
# allocation of anyone's that changes size can change it. libiscsi 1.20
# takes the struct from calloc(). The initiator tools therefore run with
# a heap that hands out zeroed blocks: glibc's M_PERTURB with 0xff fills
# each block malloc() returns with 0, the complement of 0xff (mallopt(3);
# glibc skips it for the blocks of up to 1032 bytes it hands out from its
# per-thread cache, a size libiscsi's struct is not); the preloaded ASan
# allocator of the
# sanitizer builds fills every block up to 1 MiB with 0. heap_probe.c
# checks that the environment does it (--heap-probe).
INITIATOR_HEAP = {'MALLOC_PERTURB_': '255'}
ASAN_ZERO_FILL = 'malloc_fill_byte=0:max_malloc_fill_size=1048576'
STOP_GUARD = 15                 # s: the same, for the target's delete


def free_tcp_port():
    s = socket.socket()
    s.bind(('127.0.0.1', 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Side:
    """One uroce-run process's environment: side 'a' (tgtd, the memif
    server) or 'b' (an initiator tool)."""

    def __init__(self, a, tmp, tag):
        self.a, self.tmp, self.tag = a, tmp, tag
        self.prefixes = []

    def env(self, side, name):
        e = dict(os.environ)
        role = 'server' if side == 'a' else 'client'
        prefix = 'uroce-iser-%s-%s-%s' % (self.tag, side, name)
        self.prefixes.append(prefix)
        e['UROCE_PORT_DEV'] = ('net_memif0,role=%s,id=0,socket=/run/uroce/'
                               'iser-%s.sock,mac=%s' % (role, self.tag,
                                                        cm.MAC[side]))
        if side == 'a':
            e['UROCE_PORT_LINK_WAIT'] = '0'
        else:
            e.update(INITIATOR_HEAP)
        e['UROCE_EAL_ARGS'] = ('--no-pci --no-huge -m 256 --file-prefix=%s '
                               '--log-level=*:warning' % prefix)
        if self.a.fault:
            e['UROCE_PORT_FAULT'] = self.a.fault
        if self.a.cm_ack_timeout is not None:
            e['UROCE_PORT_CM_ACK_TIMEOUT'] = str(self.a.cm_ack_timeout)
        if self.a.capture:
            e['UROCE_PORT_PCAP'] = self.pcap(side, name)
        e['TGT_IPC_SOCKET'] = os.path.join(self.tmp, 'tgtd.sock')
        return e

    def pcap(self, side, name):
        return os.path.join(self.tmp, '%s-%s.pcapng' % (side, name))

    def cleanup(self):
        for pfx in self.prefixes:
            shutil.rmtree(os.path.join('/var/run/dpdk', pfx),
                          ignore_errors=True)


def asan_options(zero_heap):
    """ASAN_OPTIONS for a tool; with zero_heap, the allocator filling each
    block with 0 (INITIATOR_HEAP)."""
    return 'ASAN_OPTIONS=detect_leaks=0' + (':' + ASAN_ZERO_FILL
                                            if zero_heap else '')


def preload(cmd, zero_heap=False):
    """cmd with the sanitizer runtime preloaded (sanitizer builds)."""
    pre = os.environ.get('UROCE_TEST_PRELOAD')
    if pre:
        return ['env', 'LD_PRELOAD=' + pre, asan_options(zero_heap)] + cmd
    return cmd


def heap_probe(sides, probe):
    """Problems of the initiator's heap: heap_probe.c run in the
    environment the initiator tools get (INITIATOR_HEAP). In sanitizer
    builds the probe links the ASan runtime itself (clang's, static):
    the tools' options, without the preload."""
    cmd = [probe]
    if os.environ.get('UROCE_TEST_PRELOAD'):
        cmd = ['env', asan_options(True)] + cmd
    r = subprocess.run(cmd,
                       env=sides.env('b', 'heap-probe'), capture_output=True,
                       text=True, timeout=60)
    if r.returncode == 0:
        return []
    return ['the initiator\'s heap hands out memory that is not zeroed '
            '(libiscsi 1.19 reads it): %s' % (r.stdout + r.stderr).strip()]


def tgtadm(env, *args):
    r = subprocess.run(['tgtadm', '-C', str(CONTROL_PORT)] + list(args),
                       env=env, capture_output=True, text=True, timeout=60)
    return r.returncode, r.stdout + r.stderr


def start_target(a, sides, tmp, lun):
    """tgtd under uroce-run, configured; (Popen, output file) or raises."""
    env = sides.env('a', 'tgtd')
    out = open(os.path.join(tmp, 'tgtd.log'), 'w+')
    cmd = preload(['tgtd', '-f', '-C', str(CONTROL_PORT), '--iscsi',
                   'portal=127.0.0.1:%d' % free_tcp_port(), '--iser',
                   'pool_sz_mb=128'])
    wd = os.path.join(tmp, 'tgtd')
    os.mkdir(wd)
    p = subprocess.Popen([a.run, '-c', a.conf_a, '--'] + cmd, env=env,
                         stdout=out, stderr=subprocess.STDOUT,
                         stdin=subprocess.DEVNULL, cwd=wd)
    deadline = time.monotonic() + READY_GUARD
    while True:
        if p.poll() is not None:
            raise RuntimeError('tgtd exited (%s) before it was ready'
                               % p.returncode)
        rc, _ = tgtadm(env, '--mode', 'target', '--op', 'show')
        if rc == 0:
            break
        if time.monotonic() > deadline:
            raise RuntimeError('tgtd never answered tgtadm')
        time.sleep(0.2)
    for args in (['--mode', 'target', '--op', 'new', '--tid', '1',
                  '--targetname', IQN],
                 ['--mode', 'logicalunit', '--op', 'new', '--tid', '1',
                  '--lun', '1', '--backing-store', lun, '--bstype', 'rdwr'],
                 ['--mode', 'target', '--op', 'bind', '--tid', '1',
                  '--initiator-address', 'ALL'],
                 ['--mode', 'target', '--op', 'bind', '--tid', '1',
                  '--initiator-name', INITIATOR]):
        rc, text = tgtadm(env, '--lld', 'iser', *args)
        if rc != 0:
            raise RuntimeError('tgtadm %s: %s' % (' '.join(args), text))
    return p, out, env


def stop_target(p, env):
    """tgtd asked to leave (its target deleted, then the system), then
    killed if it does not: its exit writes the capture's end. No forced
    delete: tgt 1.0.85 crashes closing a live iSER connection that way.
    The delete is refused while the last tool's connection is open (tgt
    keeps its I_T nexus until the connection closes, which may wait for
    the retries of a send whose ACK the exiting tool never sent): it is
    asked again until it is done, within the guard."""
    if p.poll() is None:
        deadline = time.monotonic() + STOP_GUARD
        while p.poll() is None:
            rc, _ = tgtadm(env, '--lld', 'iser', '--mode', 'target', '--op',
                           'delete', '--tid', '1')
            if rc == 0 or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        tgtadm(env, '--mode', 'system', '--op', 'delete')
        try:
            p.wait(15)
        except subprocess.TimeoutExpired:
            p.send_signal(signal.SIGTERM)
            try:
                p.wait(5)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
    return p.returncode


# An initiator tool that never logged in (iscsi-test-cu's set-up).
LOGIN_LOST = re.compile(r'^error: Failed to login to target', re.M)


def run_tool(a, sides, name, cmd):
    """An initiator tool under uroce-run; (exit status, output)."""
    r = subprocess.run([a.run, '-c', a.conf_b, '--'] +
                       preload(cmd, zero_heap=True),
                       env=sides.env('b', name), capture_output=True,
                       text=True, timeout=a.timeout, cwd=sides.tmp)
    return r.returncode, r.stdout + r.stderr


def url():
    return 'iser://%s:%d/%s/1' % (cm.SERVER_IP, ISER_PORT, IQN)


def cu_passed(text):
    """Whether an iscsi-test-cu run ran its tests and all passed."""
    m = re.search(r'^\s*tests\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)', text, re.M)
    a = re.search(r'^\s*asserts\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)', text, re.M)
    if m is None or a is None:
        return False
    ran, passed, failed = int(m.group(2)), int(m.group(3)), int(m.group(4))
    return ran > 0 and ran == passed and failed == 0 and \
        int(a.group(4)) == 0 and int(a.group(3)) > 0


def check_lun(path, pattern):
    """Problems of the backing file after ALL.Write16.Simple."""
    with open(path, 'rb') as f:
        data = f.read()
    probs = []
    if len(data) != LUN_BYTES:
        probs.append('backing file is %d bytes' % len(data))
        return probs
    fill = bytes([FILL]) * WRITTEN
    if data[:WRITTEN] != fill:
        probs.append('first %d bytes are not what WRITE16 wrote' % WRITTEN)
    if data[-WRITTEN:] != fill:
        probs.append('last %d bytes are not what WRITE16 wrote' % WRITTEN)
    if data[WRITTEN:-WRITTEN] != pattern[WRITTEN:-WRITTEN]:
        probs.append('the blocks between them changed')
    return probs


# (name, command, check of its output, what it shows)
def steps(only=None):
    u = url()
    return [st for st in all_steps(u) if only is None or st[0] in only]


def all_steps(u):
    return [
        ('inq', ['iscsi-inq', '-i', INITIATOR, u],
         lambda t: re.search(r'^Vendor:IET\s*$', t, re.M) and
         re.search(r'^Product:VIRTUAL-DISK\s*$', t, re.M) and
         re.search(r'^Peripheral Device Type:DIRECT_ACCESS', t, re.M)),
        ('readcapacity16', ['iscsi-readcapacity16', '-i', INITIATOR, u],
         lambda t: re.search(r'^RETURNED LOGICAL BLOCK ADDRESS:%d$'
                             % (LUN_BYTES // BLOCK - 1), t, re.M) and
         re.search(r'^LOGICAL BLOCK LENGTH IN BYTES:%d$' % BLOCK, t,
                   re.M)),
        ('verify-pattern', ['iscsi-test-cu', '-i', INITIATOR, '-t',
                            'ALL.Verify16.Simple', u], cu_passed),
        ('verify-mismatch', ['iscsi-test-cu', '-i', INITIATOR, '-t',
                             'ALL.Verify16.Mismatch', u], cu_passed),
        ('write16', ['iscsi-test-cu', '-d', '-i', INITIATOR, '-t',
                     'ALL.Write16.Simple', u], cu_passed),
        ('lun-file', None, None),
        ('verify-written', ['iscsi-test-cu', '-i', INITIATOR, '-t',
                            'ALL.Verify16.Simple', u], cu_passed),
    ]


def check_capture_file(path, full):
    """(problems, summary line) of one capture."""
    if full:
        import check_capture as cc
        r = cc.check(path)
        msgs = cm.cm_messages(path)
        summ = cc.summary(path, r)
    else:
        r = cm.tshark_only(path)
        msgs = cm.cm_messages_any(path)
        summ = '%d RoCEv2 frames (tshark only)' % r['roce']['out']
    probs = list(r['problems'])
    if r['roce']['out'] == 0:
        probs.append('no RoCEv2 frame sent')
    for m in WANT_CM:
        if sum(v for k, v in msgs.items() if k[0] == m) == 0:
            probs.append('no %s in the capture' % m)
    line = '  capture %s: %s; CM %s' % (
        os.path.basename(path), summ,
        ', '.join('%s %s %d' % (k[0], k[1], v)
                  for k, v in sorted(msgs.items())))
    return probs, line


def run(a, tmp):
    pattern = random.Random(SEED).randbytes(LUN_BYTES)
    lun = os.path.join(tmp, 'lun.img')
    with open(lun, 'wb') as f:
        f.write(pattern)
    sides = Side(a, tmp, '%d' % os.getpid())
    ok, tgt, tenv, tout, pcaps = True, None, None, None, []
    if a.heap_probe:
        probs = heap_probe(sides, a.heap_probe)
        print('%s initiator heap%s' % ('ok  ' if not probs else 'FAIL',
                                       ''.join('\n  ' + p for p in probs)))
        if probs:
            return False
    try:
        tgt, tout, tenv = start_target(a, sides, tmp, lun)
        if a.capture:
            pcaps.append(sides.pcap('a', 'tgtd'))
        for name, cmd, check in steps(a.only):
            if cmd is None:
                probs = check_lun(lun, pattern)
                print('%s %s%s' % ('ok  ' if not probs else 'FAIL', name,
                                   ''.join('\n  ' + p for p in probs)))
                ok = ok and not probs
                continue
            t0 = time.monotonic()
            rc, text = run_tool(a, sides, name, cmd)
            good = rc == 0 and bool(check(text))
            if not good and a.fault and LOGIN_LOST.search(text):
                # tgt takes a connection out of its login phase when the
                # SEND of its Login Response completes: if the initiator's
                # ACK of it is lost, its first command arrives before the
                # retransmission is ACKed and tgtd closes the connection
                # ("non-login pdu during login phase"); no data moved yet
                print('note %s: login lost to tgt\'s login-phase race under '
                      'loss, run again' % name)
                rc, text = run_tool(a, sides, name, cmd)
                good = rc == 0 and bool(check(text))
            print('%s %s (exit %s, %.1f s)' % ('ok  ' if good else 'FAIL',
                                               name, rc, time.monotonic() - t0))
            if not good or a.verbose:
                print('---- %s:\n%s----' % (name, text[-3000:]))
            ok = ok and good
            if a.capture:
                pcaps.append(sides.pcap('b', name))
            if not good:
                break
    except (RuntimeError, subprocess.TimeoutExpired) as e:
        print('FAIL %s' % e)
        ok = False
    finally:
        if tgt is not None:
            rc = stop_target(tgt, tenv)
            tout.seek(0)
            log = tout.read()
            tout.close()
            if not ok or a.verbose:
                print('---- tgtd (exit %s):\n%s----' % (rc, log[-3000:]))
        sides.cleanup()
    if ok and a.capture:
        reports = cm.capture_pool.starmap(
            check_capture_file, [(path, a.full_capture) for path in pcaps])
        cm.capture_pool.close()
        for probs, line in reports:
            print(line)
            for p in probs:
                print('    ' + p)
            ok = ok and not probs
    return ok


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--run')
    ap.add_argument('--conf-a')
    ap.add_argument('--conf-b')
    ap.add_argument('--fault', help='UROCE_PORT_FAULT for both sides')
    ap.add_argument('--cm-ack-timeout', type=int,
                    help='[port] cm_ack_timeout for both sides')
    ap.add_argument('--only', help='comma-separated step names to run')
    ap.add_argument('--timeout', type=float, default=300,
                    help='guard of each tool run (s)')
    ap.add_argument('--capture', action='store_true')
    ap.add_argument('-v', '--verbose', action='store_true')
    ap.add_argument('--heap-probe', metavar='PROBE',
                    help='heap_probe.c\'s program: check first that the '
                    'initiator tools\' heap hands out zeroed blocks')
    ap.add_argument('--heap-probe-only', action='store_true',
                    help='that check alone (no tgt, no libiscsi)')
    a = ap.parse_args()
    if a.heap_probe_only:
        if not a.heap_probe:
            ap.error('--heap-probe-only needs --heap-probe')
        tmp = tempfile.mkdtemp(prefix='uroce-iser-heap-')
        try:
            probs = heap_probe(Side(a, tmp, '%d' % os.getpid()), a.heap_probe)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        for p in probs:
            print('FAIL ' + p)
        print('%s initiator heap' % ('passed' if not probs else 'FAILED'))
        return 0 if not probs else 1
    if None in (a.run, a.conf_a, a.conf_b):
        ap.error('--run, --conf-a and --conf-b are required')
    missing = [t for t in TOOLS if shutil.which(t) is None]
    if missing:
        print('SKIP: not installed: %s (packages tgt and libiscsi-bin)'
              % ' '.join(missing))
        return SKIP
    if a.only is not None:
        a.only = a.only.split(',')
        names = [st[0] for st in all_steps('')]
        bad = [n for n in a.only if n not in names]
        if bad:
            ap.error('--only: unknown step %s (steps: %s)'
                     % (', '.join(bad), ', '.join(names)))
    a.run = os.path.abspath(a.run)
    a.conf_a, a.conf_b = os.path.abspath(a.conf_a), os.path.abspath(a.conf_b)
    a.full_capture = False
    if a.capture and shutil.which('tshark') is None:
        print('SKIP capture checks: tshark is not installed')
        a.capture = False
    elif a.capture:
        try:
            import check_capture  # noqa: F401
            a.full_capture = True
        except SystemExit:
            print('capture checks with tshark alone: scapy is not '
                  'available (no ICRC check)')
    tmp = tempfile.mkdtemp(prefix='uroce-iser-')
    ok = False
    try:
        ok = run(a, tmp)
    finally:
        if ok:
            shutil.rmtree(tmp, ignore_errors=True)
        else:
            print('captures and logs kept in %s' % tmp)
    print('%s iser%s%s' % ('passed' if ok else 'FAILED',
                           ' (fault %s)' % a.fault if a.fault else '',
                           ' (cm_ack_timeout %d)' % a.cm_ack_timeout
                           if a.cm_ack_timeout is not None else ''))
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main())
