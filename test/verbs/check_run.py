#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The uroce authors
"""uroce-run: the launcher sets the environment, runs the program, and
fails in one line with exit 2 when the configuration or program is missing.

The environment is checked through /usr/bin/env (always there); the device
list through ibv_devices, skipped with a message if ibverbs-utils is not
installed. UROCE_TEST_PRELOAD: see check_tools.py.
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile

GOOD_2PORTS = """\
[port]
dev = net_ring0
ip  = 192.168.77.1/24
mac = 02:00:00:00:77:01
[port1]
dev = net_ring1
ip  = 192.168.78.1/24
"""
BAD_MTU = "[port]\ndev = net_ring0\nip = 192.168.77.1/24\nmtu = abc\n"


class Checker:
    def __init__(self, run, libdir, cmdir):
        self.run_exe, self.libdir, self.errors = run, libdir, []
        self.cmdir = cmdir

    def check(self, cond, what):
        print('%s %s' % ('ok  ' if cond else 'FAIL', what))
        if not cond:
            self.errors.append(what)

    def run(self, args, env_extra=None, cwd=None, drop_config=True):
        env = dict(os.environ)
        if drop_config:
            env.pop('UROCE_CONFIG', None)
        env.update(env_extra or {})
        p = subprocess.run([self.run_exe] + args, env=env, cwd=cwd,
                           capture_output=True, text=True, timeout=60,
                           stdin=subprocess.DEVNULL)
        return p.returncode, p.stdout, p.stderr


def env_of(stdout):
    return dict(l.split('=', 1) for l in stdout.splitlines() if '=' in l)


def check_env(c, tmp, good):
    rc, out, err = c.run(['-c', os.path.basename(good), '--', 'env'],
                         env_extra={'LD_LIBRARY_PATH': '/old/dir'}, cwd=tmp)
    e = env_of(out)
    c.check(rc == 0, 'relative -c FILE: env runs, exit 0 (got %d, %s)'
            % (rc, err.strip()))
    c.check(e.get('UROCE_CONFIG') == os.path.realpath(good),
            'UROCE_CONFIG made absolute: %s' % e.get('UROCE_CONFIG'))
    c.check(e.get('LD_LIBRARY_PATH') ==
            os.path.realpath(c.libdir) + ':' + os.path.realpath(c.cmdir) +
            ':/old/dir',
            'our libibverbs and librdmacm directories first in '
            'LD_LIBRARY_PATH: %s' % e.get('LD_LIBRARY_PATH'))
    rc, out, err = c.run(['env'], env_extra={'UROCE_CONFIG': good},
                         drop_config=False)
    c.check(rc == 0 and env_of(out).get('UROCE_CONFIG') ==
            os.path.realpath(good), 'an existing UROCE_CONFIG is honoured')


def check_errors(c, tmp, good):
    for args, env, what in [
            (['-c', os.path.join(tmp, 'nope.conf'), '--', 'env'], {},
             'missing config file'),
            (['-c', good, '--', 'uroce-no-such-program'], {},
             'missing program'),
            (['--', 'env'], {}, 'no -c and no UROCE_CONFIG'),
            (['-c', good], {}, 'no program'),
            (['--bogus', 'env'], {}, 'unknown option')]:
        rc, out, err = c.run(args, env_extra=env)
        lines = err.strip().splitlines()
        c.check(rc == 2 and out == '' and len(lines) >= 1 and
                lines[-1].startswith(('uroce-run:', "Try 'uroce-run")) and
                (len(lines) == 1 or what == 'unknown option'),
                '%s: one line, exit 2 (got %d: %r)' % (what, rc, err))
    rc, out, err = c.run(['--help'])
    c.check(rc == 0 and 'uroce-run -c' in out and err == '',
            '--help explains, exit 0')


def tool(name):
    """The tool's command line after '--'. In sanitizer builds the runtime
    is preloaded into the tool only (through env), not into uroce-run,
    which has it linked in already."""
    pre = os.environ.get('UROCE_TEST_PRELOAD')
    return ['env', 'LD_PRELOAD=' + pre, 'ASAN_OPTIONS=detect_leaks=0',
            name] if pre else [name]


def check_devices(c, sample, good, bad):
    if shutil.which('ibv_devices') is None:
        print('SKIP ibv_devices: not installed (apt-get install '
              'ibverbs-utils)')
        return
    rc, out, err = c.run(['-c', sample, '--'] + tool('ibv_devices'))
    c.check(rc == 0 and ' uroce0 ' in out.replace('\t', ' ') + ' ' and
            'uroce1' not in out, 'sample config: ibv_devices lists uroce0 '
            '(exit %d)\n%s%s' % (rc, out, err))
    rc, out, err = c.run(['-c', good, '--'] + tool('ibv_devices'))
    # mac 02:00:00:00:77:01 -> modified EUI-64 0000:00ff:fe00:7701
    c.check(rc == 0 and '0000:00ff:fe00:7701'.replace(':', '') in out and
            'uroce1' in out, 'two ports: uroce0 with the EUI-64 GUID, '
            'uroce1\n%s%s' % (out, err))
    rc, out, err = c.run(['-c', bad, '--'] + tool('ibv_devices'))
    lines = err.strip().splitlines()
    c.check(len(lines) == 1 and bad in lines[0] and 'mtu' in lines[0] and
            'uroce0' not in out,
            'bad config: one-line error naming file and key, no device '
            '(stderr %r)' % err)


def check_install_layout(c, tmp, good, bindir, rel):
    """A copy of the launcher in <prefix>/<bindir> finds both libraries in
    <prefix>/<libdir>/uroce, given relative to bindir as meson computed,
    and names that folder once."""
    if os.path.isabs(bindir) or os.path.isabs(rel):
        print('SKIP install layout: absolute bindir or libdir')
        return
    bin_dir = os.path.join(tmp, 'inst', bindir)
    lib_dir = os.path.normpath(os.path.join(bin_dir, rel))
    os.makedirs(bin_dir)
    os.makedirs(lib_dir)
    shutil.copy2(c.run_exe, bin_dir)
    shutil.copy(os.path.join(c.libdir, 'libibverbs.so.1'), lib_dir)
    shutil.copy(os.path.join(c.cmdir, 'librdmacm.so.1'), lib_dir)
    p = subprocess.run([os.path.join(bin_dir, 'uroce-run'), '-c', good, '--',
                        'env'], capture_output=True, text=True, timeout=60)
    got = env_of(p.stdout).get('LD_LIBRARY_PATH', '')
    c.check(p.returncode == 0 and
            got.split(':')[0] == os.path.realpath(lib_dir) and
            got.split(':').count(os.path.realpath(lib_dir)) == 1,
            'install layout: %s/uroce-run finds %s (got %r, %s)' %
            (bindir, lib_dir, got, p.stderr.strip()))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--run', required=True, help='the uroce-run executable')
    ap.add_argument('--libdir', required=True)
    ap.add_argument('--cmdir', required=True,
                    help='the folder of the build\'s librdmacm.so.1')
    ap.add_argument('--config', required=True, help='config/memif-a.conf')
    ap.add_argument('--install-bindir', default='bin')
    ap.add_argument('--install-libdir-rel', required=True,
                    help='<libdir>/uroce relative to <bindir>')
    a = ap.parse_args()
    c = Checker(os.path.abspath(a.run), os.path.abspath(a.libdir),
                os.path.abspath(a.cmdir))
    a.config = os.path.abspath(a.config)
    with tempfile.TemporaryDirectory(prefix='uroce-run-test.') as tmp:
        good = os.path.join(tmp, 'two.conf')
        bad = os.path.join(tmp, 'bad.conf')
        with open(good, 'w') as f:
            f.write(GOOD_2PORTS)
        with open(bad, 'w') as f:
            f.write(BAD_MTU)
        check_env(c, tmp, good)
        check_errors(c, tmp, good)
        check_devices(c, a.config, good, bad)
        check_install_layout(c, tmp, good, a.install_bindir,
                             a.install_libdir_rel)
    print('%d failure(s)' % len(c.errors))
    return 1 if c.errors else 0


if __name__ == '__main__':
    sys.exit(main())
