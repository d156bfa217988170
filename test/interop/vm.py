#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The uroce authors
"""The interop guest, running: QEMU (TCG, no KVM) on a tap in a network
namespace of its own, and the command channel to its /init.

  netns uroce-interop-PID
    tap uroce-tap0 (10.81.0.1/24, the host kernel's address, for the
    tools' TCP exchange; IPv6 off)  <-- af_packet: uroce, 10.81.0.3, its
    own MAC
        |
    QEMU's virtio-net  -->  guest eth0 10.81.0.2 (the kernel's), rxe0

The guest's serial port (ttyS0) is its console, written to a file; a
virtio-serial port named uroce.ctl is the command channel (guest_init.sh
says the protocol), a unix socket this side listens on and QEMU connects
to.

Guest.run(cmd) runs a shell command line in the guest to completion and
returns (status, output); Guest.start(cmd) starts one in the background
and returns a Job whose wait(deadline) returns the same, killing the
command past the deadline. Guest.close() always stops QEMU (by its PID)
and removes the namespace with the tap in it.
"""

import base64
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time

NET = '10.81.0.'
HOST_IP, GUEST_IP, UROCE_IP = NET + '1', NET + '2', NET + '3'
PREFIX = 24
TAP = 'uroce-tap0'
CHANNEL = 'uroce.ctl'
GUEST_MAC = '02:00:00:00:81:02'
UROCE_MAC = '02:00:00:00:81:03'
BOOT_TIMEOUT = 600
REQUEST_TIMEOUT = 120


class GuestError(Exception):
    pass


class Job:
    def __init__(self, guest, jid, cmd):
        self.guest, self.jid, self.cmd = guest, jid, cmd
        self.result = None

    def poll(self):
        """(status, output), status 'running' while it runs."""
        if self.result is None:
            r = self.guest.request('poll', str(self.jid))
            if r[0] != 'running':
                self.result = r
            return r
        return self.result

    def wait(self, deadline):
        """(status, output) once done; killed at deadline ('timeout')."""
        while time.monotonic() < deadline:
            r = self.poll()
            if r[0] != 'running':
                return r
            time.sleep(0.2)
        r = self.guest.request('kill', str(self.jid))
        self.result = ('timeout' if r[0] == 'running' or r[0] == 137 else
                       r[0], r[1])
        return self.result


class Guest:
    def __init__(self, vmlinuz, initrd, log=print, mem_mb=512):
        self.vmlinuz, self.initrd, self.log = vmlinuz, initrd, log
        self.mem_mb = mem_mb
        self.ns = 'uroce-interop-%d' % os.getpid()
        self.dir = tempfile.mkdtemp(prefix='uroce-interop-')
        self.console = os.path.join(self.dir, 'console.log')
        self.qemu = None
        self.chan = None
        self.next_id = 1
        self.boot_seconds = None

    # -- set-up and tear-down --------------------------------------------

    def ip(self, *args):
        subprocess.run(['ip', '-n', self.ns] + list(args), check=True,
                       timeout=30, stdout=subprocess.DEVNULL)

    def open(self):
        subprocess.run(['ip', 'netns', 'add', self.ns], check=True,
                       timeout=30)
        self.ip('tuntap', 'add', 'dev', TAP, 'mode', 'tap')
        subprocess.run(['ip', 'netns', 'exec', self.ns, 'sysctl', '-qw',
                        'net.ipv6.conf.%s.disable_ipv6=1' % TAP], check=True,
                       timeout=30)
        self.ip('link', 'set', 'lo', 'up')
        self.ip('link', 'set', TAP, 'up')
        self.ip('addr', 'add', '%s/%d' % (HOST_IP, PREFIX), 'dev', TAP)
        sock = os.path.join(self.dir, 'ctl.sock')
        srv = socket.socket(socket.AF_UNIX)
        srv.bind(sock)
        srv.listen(1)
        srv.settimeout(60)
        cmd = ['ip', 'netns', 'exec', self.ns, 'qemu-system-x86_64',
               '-accel', 'tcg', '-cpu', 'max', '-smp', '1',
               '-m', str(self.mem_mb), '-nographic', '-no-reboot',
               '-monitor', 'none',
               '-kernel', self.vmlinuz, '-initrd', self.initrd,
               '-append', 'console=ttyS0 panic=-1 uroce.ip=%s/%d' %
               (GUEST_IP, PREFIX),
               '-serial', 'file:' + self.console,
               '-device', 'virtio-serial-pci,id=vs0',
               '-chardev', 'socket,id=ctl,path=' + sock,
               '-device', 'virtserialport,bus=vs0.0,chardev=ctl,name=%s'
               % CHANNEL,
               '-netdev', 'tap,id=n0,ifname=%s,script=no,downscript=no' % TAP,
               '-device', 'virtio-net-pci,netdev=n0,mac=%s' % GUEST_MAC]
        # QEMU links the system's libibverbs: keep uroce's (the test
        # environment's LD_LIBRARY_PATH) and any sanitizer preload away
        # from it.
        env = {k: v for k, v in os.environ.items()
               if k not in ('LD_LIBRARY_PATH', 'LD_PRELOAD')}
        t0 = time.monotonic()
        self.qemu = subprocess.Popen(cmd, env=env, stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL,
                                     stderr=open(os.path.join(self.dir,
                                                              'qemu.err'),
                                                 'w'))
        try:
            conn, _ = srv.accept()
        except OSError as e:
            raise GuestError('QEMU never connected the command channel '
                             '(%s): %s'
                             % (e, self.qemu_errors()))
        finally:
            srv.close()
        conn.settimeout(BOOT_TIMEOUT)
        self.chan = conn.makefile('rwb', buffering=0)
        while True:
            try:
                line = self.chan.readline()
            except OSError as e:
                raise GuestError('the guest did not boot (%s):\n%s' %
                                 (e, self.console_tail()))
            if not line:
                raise GuestError('the guest stopped before its command '
                                 'channel came up: %s\n%s' %
                                 (self.qemu_errors(), self.console_tail()))
            if line.strip() == b'@@ready':
                break
        self.boot_seconds = time.monotonic() - t0
        # Every request is answered at once (a command to completion runs
        # bounded by its own timeout(1)): silence this long is a hung guest.
        conn.settimeout(REQUEST_TIMEOUT)

    def close(self):
        if self.qemu is not None and self.qemu.poll() is None:
            os.kill(self.qemu.pid, signal.SIGTERM)
            try:
                self.qemu.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.kill(self.qemu.pid, signal.SIGKILL)
                self.qemu.wait()
        subprocess.run(['ip', 'netns', 'del', self.ns], timeout=30,
                       stderr=subprocess.DEVNULL)
        shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self):
        try:
            self.open()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc):
        self.close()

    # -- the command channel ---------------------------------------------

    def request(self, verb, arg):
        """One request, its answer: (status int or 'running', output)."""
        rid = self.next_id
        self.next_id += 1
        try:
            self.chan.write(('%d %s %s\n' % (rid, verb, arg)).encode())
            head = self.chan.readline()
            while head and not head.startswith(b'@@%d ' % rid):
                head = self.chan.readline()
            body = []
            while head:
                line = self.chan.readline()
                if not line or line.strip() == b'@@end %d' % rid:
                    break
                body.append(line.strip())
        except OSError as e:
            raise GuestError('no answer to `%s` from the guest (%s); its '
                             'console:\n%s' % (verb, e, self.console_tail()))
        if not head or not line:
            raise GuestError('the command channel closed; the guest\'s '
                             'console:\n%s' % self.console_tail())
        status = head.split()[1].decode()
        out = base64.b64decode(b''.join(body)).decode(errors='replace')
        return (status if status == 'running' else int(status)), out

    def run(self, cmd):
        return self.request('run', base64.b64encode(cmd.encode()).decode())

    def start(self, cmd):
        rid = self.next_id
        self.request('bg', base64.b64encode(cmd.encode()).decode())
        return Job(self, rid, cmd)

    def check(self, cmd):
        """Output of cmd, which must exit 0."""
        st, out = self.run(cmd)
        if st != 0:
            raise GuestError('guest: `%s` exited %s:\n%s' % (cmd, st, out))
        return out

    # -- what the tests read ---------------------------------------------

    def host_cmd(self, cmd):
        """cmd run in the guest's namespace on the host side."""
        return ['ip', 'netns', 'exec', self.ns] + cmd

    def rxe_counters(self):
        """{name: value} of rxe0's hw_counters."""
        out = self.check('cd /sys/class/infiniband/rxe0/ports/1/hw_counters'
                         ' && for f in *; do echo "$f $(cat $f)"; done')
        return {k: int(v) for k, v in (ln.split() for ln in
                                       out.splitlines() if ln.strip())}

    def dmesg(self):
        return self.run('dmesg')[1]

    def qemu_errors(self):
        try:
            with open(os.path.join(self.dir, 'qemu.err'),
                      errors='replace') as f:
                return f.read().strip()[-2000:]
        except OSError:
            return ''

    def console_tail(self, n=40):
        try:
            with open(self.console, errors='replace') as f:
                return ''.join(f.readlines()[-n:])
        except OSError:
            return ''
