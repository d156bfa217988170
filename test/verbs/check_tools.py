#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The uroce authors
"""Real verbs programs load with our libibverbs.so.1 in their place.

Debian links ibv_devinfo, ibv_rc_pingpong and perftest BIND_NOW: every
symbol they import (and those that libmlx5, libefa and librdmacm import)
must resolve at load time at the right version. Each tool runs with
LD_LIBRARY_PATH pointing at our build and LD_BIND_NOW=1; the test fails if
the dynamic linker complains, if the tool did not get our library, or if
it did not produce its usual first output. A tool that is not installed
is skipped with a message (apt-get install ibverbs-utils perftest); with
none installed the whole test is skipped (exit 77).

UROCE_TEST_PRELOAD (set by meson in sanitizer builds) names the sanitizer
runtime that our library needs inside an uninstrumented program.
"""

import argparse
import os
import shutil
import subprocess
import sys

SKIP = 77
LOADER_ERRORS = ('symbol lookup error', 'undefined symbol',
                 'error while loading shared libraries', 'version `',
                 "version '")

# (program and arguments, text its output must contain, with a config?)
# ibv_devinfo -v opens the device: the stack starts (EAL, the memif
# server port, whose link stays down with no client) and the tool reads
# the device, port and GID attributes.
TOOLS = [
    (['ibv_devices'], 'uroce0', True),
    (['ibv_devinfo'], 'No IB devices found', False),
    (['ibv_devinfo', '-v', '-d', 'uroce0'],
     'GID[  0]:\t\t::ffff:192.168.77.1, RoCE v2', True),
    (['ibv_devinfo', '-d', 'uroce0'], 'link_layer:\t\tEthernet', True),
    (['ibv_devinfo', '-d', 'uroce0'], 'vendor_id:\t\t\t0x27572', True),
    (['ibv_rc_pingpong', '--help'], 'Usage:', False),
    # -t asks for completion timestamps (completion_timestamp_mask,
    # hca_core_clock, ibv_create_cq_ex with IBV_WC_EX_WITH_COMPLETION_
    # TIMESTAMP): the tool makes its CQ and QP and says its address, then
    # finds no server on port 1 (a client exits; a server would wait).
    (['ibv_rc_pingpong', '-t', '-g', '0', '-d', 'uroce0', '-p', '1',
      '127.0.0.1'], 'local address:  LID', True),
    (['ib_write_bw', '--help'], 'Usage:', False),
]


def private_run(env):
    """A device open starts the stack: give it an EAL file prefix and a
    memif socket of its own, so that it meets no other run."""
    tag = 'uroce-tools-%d' % os.getpid()
    env['UROCE_EAL_ARGS'] = ('--no-pci --no-huge -m 256 --file-prefix=%s '
                             '--log-level=*:warning' % tag)
    env['UROCE_PORT_DEV'] = ('net_memif0,role=server,id=0,socket=/run/'
                             'uroce/%s.sock' % tag)
    env['UROCE_PORT_LINK_WAIT'] = '0'   # no peer comes: open at once
    return '/var/run/dpdk/' + tag


def tool_env(libdir, config):
    env = dict(os.environ)
    env['LD_LIBRARY_PATH'] = libdir
    env['LD_BIND_NOW'] = '1'
    env.pop('UROCE_CONFIG', None)
    if config:
        env['UROCE_CONFIG'] = config
    pre = os.environ.get('UROCE_TEST_PRELOAD')
    if pre:
        env['LD_PRELOAD'] = pre
        env['ASAN_OPTIONS'] = 'detect_leaks=0'
    return env


def resolves_to_ours(path, env, libdir):
    """What the dynamic linker picks for libibverbs.so.1 (ldd's way)."""
    tenv = dict(env, LD_TRACE_LOADED_OBJECTS='1')
    out = subprocess.run([path], env=tenv, capture_output=True, text=True,
                         timeout=60).stdout
    for line in out.splitlines():
        f = line.split()
        if f and f[0] == 'libibverbs.so.1' and len(f) >= 3:
            return os.path.dirname(os.path.realpath(f[2])) == \
                os.path.realpath(libdir), f[2]
    return False, '(libibverbs.so.1 not loaded)'


def run_tool(cmd, expect, config, libdir):
    path = shutil.which(cmd[0])
    if path is None:
        print('SKIP %s: not installed' % cmd[0])
        return None
    env = tool_env(libdir, config if config else None)
    ours, got = resolves_to_ours(path, env, libdir)
    if not ours:
        return ['%s: libibverbs.so.1 resolves to %s, not %s' %
                (cmd[0], got, libdir)]
    rundir = private_run(env) if config else None
    p = subprocess.run([path] + cmd[1:], env=env, capture_output=True,
                       text=True, timeout=60, stdin=subprocess.DEVNULL)
    if rundir:
        shutil.rmtree(rundir, ignore_errors=True)
    out = p.stdout + p.stderr
    errs = ['%s: loader error: %s' % (' '.join(cmd), line.strip())
            for line in out.splitlines()
            if any(e in line for e in LOADER_ERRORS)]
    if p.returncode < 0:
        errs.append('%s: killed by signal %d:\n%s' %
                    (' '.join(cmd), -p.returncode, out))
    if expect not in out:
        errs.append('%s (exit %d): %r not in its output:\n%s' %
                    (' '.join(cmd), p.returncode, expect, out))
    if not errs:
        print('ok   %s (exit %d)' % (' '.join(cmd), p.returncode))
    return errs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--libdir', required=True,
                    help='the directory of our libibverbs.so.1')
    ap.add_argument('--config', required=True,
                    help='a sample configuration with one port')
    a = ap.parse_args()
    errors, ran = [], 0
    for cmd, expect, with_config in TOOLS:
        r = run_tool(cmd, expect, a.config if with_config else None,
                     a.libdir)
        if r is not None:
            ran += 1
            errors += r
    for e in errors:
        print('FAIL ' + e)
    if ran == 0:
        print('SKIP: none of the tools is installed')
        return SKIP
    return 1 if errors else 0


if __name__ == '__main__':
    sys.exit(main())
