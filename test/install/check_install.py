#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The uroce authors
"""`meson install` into a DESTDIR, then use what it installed:

- the layout: the programs in bindir; libibverbs.so.1 and librdmacm.so.1
  (links to the versioned files, whose SONAMEs are the same) and
  liburoce.a in <libdir>/uroce/ with no .so link names; nothing else directly in
  <libdir> but pkgconfig/; every sample config; the headers; the man pages;
- the installed uroce-run, with an installed sample config, runs
  ibv_devices, which lists uroce0 and uroce1, and the loader's trace
  (LD_DEBUG=libs) shows that the libibverbs.so.1 it loaded is the
  installed one, not the build tree's or the system's;
- each installed man page renders with neither man nor groff warning;
- pkg-config finds uroce.pc in the DESTDIR; every installed header
  compiles on its own with its Cflags; a small native program
  compiles against the installed headers (its dependency list names them)
  and links against the installed liburoce with `pkg-config --libs uroce`
  (liburoce is static: its dependencies are public Requires, so the shared
  DPDK libraries are on that line; `--static` adds DPDK's own static
  archives and their dependencies, whose -dev packages quickstart does not
  install, so that line is only checked for liburoce), then runs: it
  prints the version the headers give and its uroce_poll() is liburoce's.

UROCE_TEST_PRELOAD: the sanitizer runtime for system programs that load a
sanitized libibverbs.so.1 (test/verbs/meson.build).
"""

import argparse
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

NATIVE_C = r'''
#include <stdio.h>
#include <string.h>
#include <uroce/uroce.h>

int
main(int argc, char **argv)
{
	/* Referenced so that the link pulls liburoce's objects in. */
	int (*volatile poll)(void) = uroce_poll;

	if (argc > 1 && strcmp(argv[1], "poll") == 0)
		return poll() == -19 ? 0 : 1;	/* -ENODEV before init */
	printf("%s\n", UROCE_VERSION);
	return 0;
}
'''


class Checker:
    def __init__(self):
        self.errors = []

    def check(self, cond, what):
        print('%s %s' % ('ok  ' if cond else 'FAIL', what))
        if not cond:
            self.errors.append(what)
        return cond


def sh(cmd, **kw):
    kw.setdefault('capture_output', True)
    kw.setdefault('text', True)
    kw.setdefault('timeout', 240)
    kw.setdefault('stdin', subprocess.DEVNULL)
    return subprocess.run(cmd, **kw)


def under(root, path):
    """root joined with a path from meson (absolute or prefix-relative)."""
    return os.path.join(root, path.lstrip('/'))


def check_layout(c, a, top, srcdir):
    bindir = under(top, a.bindir)
    libdir = under(top, a.libdir)
    priv = os.path.join(libdir, 'uroce')
    for prog in ('uroce-run', 'uroce-perf', 'uroce-selfcheck'):
        p = os.path.join(bindir, prog)
        c.check(os.access(p, os.X_OK), 'bin: %s' % p)
    for name in ('libibverbs', 'librdmacm'):
        so1 = os.path.join(priv, name + '.so.1')
        c.check(os.path.islink(so1) and
                os.path.basename(os.path.realpath(so1)).startswith(
                    name + '.so.1.') and os.path.isfile(so1),
                '%s links to the versioned file (%s)' %
                (so1, os.readlink(so1) if os.path.islink(so1)
                 else 'not a link'))
        if os.path.isfile(so1):
            d = sh(['readelf', '-d', so1]).stdout
            c.check('Library soname: [%s.so.1]' % name in d,
                    'SONAME %s.so.1' % name)
        c.check(not os.path.lexists(os.path.join(priv, name + '.so')),
                'no %s.so link name in %s' % (name, priv))
    c.check(os.path.isfile(os.path.join(priv, 'liburoce.a')),
            'liburoce.a in %s' % priv)
    direct = sorted(os.listdir(libdir)) if os.path.isdir(libdir) else []
    c.check(direct == ['pkgconfig', 'uroce'],
            'directly in %s only pkgconfig/ and uroce/: %s' % (libdir, direct))
    stray = [os.path.join(r, f) for r, _, fs in os.walk(top) for f in fs
             if f.startswith(('libibverbs', 'librdmacm')) and r != priv]
    c.check(not stray, 'no libibverbs nor librdmacm outside %s: %s' %
            (priv, stray))
    conf = under(top, os.path.join(a.datadir, 'uroce', 'config'))
    want = sorted(os.path.basename(p)
                  for p in glob.glob(os.path.join(srcdir, 'config', '*.conf')))
    got = sorted(os.listdir(conf)) if os.path.isdir(conf) else []
    c.check(want and got == want, 'configs in %s: %s' % (conf, got))
    inc = under(top, os.path.join(a.includedir, 'uroce'))
    want = sorted(os.path.basename(p) for p in
                  glob.glob(os.path.join(srcdir, 'include', 'uroce', '*.h')))
    want = sorted(want + ['uroce_version.h'])
    got = sorted(os.listdir(inc)) if os.path.isdir(inc) else []
    c.check(got == want, 'headers in %s: %s' % (inc, got))


def norm(flag):
    """-I/a/b/../c -> -I/a/c; a path -> its normal form."""
    m = re.match(r'(-[IL])?(/.*)', flag)
    return (m.group(1) or '') + os.path.normpath(m.group(2)) if m else flag


def tool(name):
    pre = os.environ.get('UROCE_TEST_PRELOAD')
    return ['env', 'LD_PRELOAD=' + pre, 'ASAN_OPTIONS=detect_leaks=0',
            name] if pre else [name]


def check_run(c, a, dest, top, builddir):
    if shutil.which('ibv_devices') is None:
        print('SKIP uroce-run: ibv_devices not installed (apt-get install '
              'ibverbs-utils)')
        return
    run = os.path.join(under(top, a.bindir), 'uroce-run')
    conf = os.path.join(under(top, a.datadir), 'uroce', 'config',
                        'ringlink-loop.conf')
    priv = os.path.realpath(os.path.join(under(top, a.libdir), 'uroce'))
    tag = 'uroce-install-%d' % os.getpid()
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(('UROCE_PORT', 'UROCE_EAL_', 'UROCE_NEIGH_'))}
    env.pop('LD_LIBRARY_PATH', None)
    env.pop('UROCE_CONFIG', None)
    # Nothing external: the sample's rings, no PCI, a prefix of our own.
    env['UROCE_EAL_ARGS'] = ('--no-pci --no-huge -m 256 --file-prefix=%s '
                             '--log-level=*:warning' % tag)
    env['LD_DEBUG'] = 'libs'
    try:
        p = sh([run, '-c', conf, '--'] + tool('ibv_devices'), env=env,
               cwd=dest)
    finally:
        shutil.rmtree('/var/run/dpdk/' + tag, ignore_errors=True)
    out = p.stdout.replace('\t', ' ') + ' '
    c.check(p.returncode == 0 and ' uroce0 ' in out and ' uroce1 ' in out,
            'installed uroce-run -c %s -- ibv_devices lists uroce0 and '
            'uroce1 (exit %d)\n%s' % (conf, p.returncode, p.stdout))
    # ld.so: "calling init: /path/libibverbs.so.1" for what it loaded.
    inits = re.findall(r'calling init: (\S*libibverbs\.so[.0-9]*)', p.stderr)
    loaded = sorted(set(os.path.realpath(x) for x in inits))
    c.check(len(loaded) == 1 and os.path.dirname(loaded[0]) == priv,
            'the libibverbs.so.1 loaded is the installed one in %s: %s'
            % (priv, loaded))
    c.check(not any(x.startswith(os.path.realpath(builddir) + '/')
                    for x in loaded), 'nothing loaded from the build tree')


def check_man(c, a, top):
    mandir = under(top, a.mandir)
    pages = [('man1', 'uroce-run.1'), ('man1', 'uroce-perf.1'),
             ('man5', 'uroce.conf.5')]
    if a.man_pages == 0:
        print('SKIP man pages: not built (-Dman=disabled, or scdoc not found)')
        return
    for sect, name in pages:
        f = os.path.join(mandir, sect, name)
        if not c.check(os.path.isfile(f), 'man page %s' % f):
            continue
        env = dict(os.environ, MANWIDTH='80', LC_ALL='C.UTF-8')
        env.pop('MAN_KEEP_FORMATTING', None)
        p = sh(['man', '--warnings', '-l', f], env=env)
        c.check(p.returncode == 0 and p.stderr == '' and
                'NAME' in p.stdout and 'SEE ALSO' in p.stdout,
                'man --warnings -l %s: renders, no warning %r'
                % (name, p.stderr))
        p = sh(['groff', '-man', '-ww', '-z', f])
        c.check(p.returncode == 0 and p.stderr == '',
                'groff -man -ww -z %s: no warning %r' % (name, p.stderr))


def check_pkgconfig(c, a, dest, top):
    if shutil.which('pkg-config') is None:
        print('SKIP pkg-config: not installed')
        return
    pcdir = os.path.join(under(top, a.libdir), 'pkgconfig')
    pcfile = os.path.join(pcdir, 'uroce.pc')
    if not c.check(os.path.isfile(pcfile), 'installed %s' % pcfile):
        return
    text = open(pcfile).read()
    if not text.startswith('prefix=${pcfiledir}/'):
        # A build directory configured before pkgconfig.relocatable was
        # the project's default: read a copy whose prefix is the DESTDIR's.
        print('NOTE uroce.pc is not relocatable in this build directory '
              '(meson configure -Dpkgconfig.relocatable=true): using a copy '
              'with prefix=%s' % top)
        pcdir = os.path.join(dest, 'pc')
        os.mkdir(pcdir)
        with open(os.path.join(pcdir, 'uroce.pc'), 'w') as f:
            f.write(re.sub(r'^prefix=.*$', 'prefix=' + top, text, count=1,
                           flags=re.M))
    env = dict(os.environ, PKG_CONFIG_PATH=pcdir)
    pc = ['pkg-config']
    p = sh(pc + ['--modversion', 'uroce'], env=env)
    if not c.check(p.returncode == 0 and p.stdout.strip() == a.version,
                   'pkg-config finds uroce.pc in %s: version %r %s'
                   % (pcdir, p.stdout.strip(), p.stderr.strip())):
        return
    cflags = sh(pc + ['--cflags', 'uroce'], env=env).stdout.split()
    libs = sh(pc + ['--libs', 'uroce'], env=env).stdout.split()
    static = sh(pc + ['--static', '--libs', 'uroce'], env=env).stdout.split()
    priv = os.path.join(under(top, a.libdir), 'uroce')
    c.check('-I' + under(top, a.includedir) in map(norm, cflags),
            'Cflags name the installed headers: %s' % cflags)
    for what, flags in (('--libs', libs), ('--static --libs', static)):
        c.check('-L' + priv in map(norm, flags) and '-luroce' in flags and
                '-lbpf' in flags and '-lxdp' in flags and
                any(f.startswith('-lrte_') for f in flags),
                '%s: the installed liburoce (-L%s -luroce), DPDK, libbpf '
                'and libxdp: %s ...' % (what, priv, ' '.join(flags[:4])))
    src = os.path.join(dest, 'native.c')
    obj = os.path.join(dest, 'native.o')
    exe = os.path.join(dest, 'native')
    dep = os.path.join(dest, 'native.d')
    with open(src, 'w') as f:
        f.write(NATIVE_C)
    cc = a.cc.split()
    p = sh(cc + a.cflags.split() + cflags +
           ['-MD', '-MF', dep, '-c', src, '-o', obj])
    if not c.check(p.returncode == 0, 'a native program compiles with '
                   '`pkg-config --cflags uroce`\n%s' % p.stderr):
        return
    # Every installed header stands alone on the installed include path:
    # none may need a header that is not installed.
    incdir = under(top, os.path.join(a.includedir, 'uroce'))
    for h in sorted(os.listdir(incdir)):
        one = os.path.join(dest, 'one.c')
        with open(one, 'w') as f:
            f.write('#include <uroce/%s>\n' % h)
        p = sh(cc + a.cflags.split() + cflags + ['-fsyntax-only', one])
        c.check(p.returncode == 0, '<uroce/%s> compiles on its own with '
                'the installed headers\n%s' % (h, p.stderr[-2000:]))
    deps = ' '.join(norm(x) for x in open(dep).read().split())
    c.check(under(top, os.path.join(a.includedir, 'uroce', 'uroce.h'))
            in deps and under(top, os.path.join(a.includedir, 'uroce',
                                                'uroce_version.h')) in deps,
            'it includes the installed uroce.h and uroce_version.h')
    p = sh(cc + [obj, '-o', exe] + a.ldflags.split() + libs)
    if not c.check(p.returncode == 0, 'it links with `pkg-config --libs '
                   'uroce`\n%s' % p.stderr[-3000:]):
        return
    env = dict(os.environ)
    env.pop('LD_LIBRARY_PATH', None)
    p = sh([exe], env=env)
    c.check(p.returncode == 0 and p.stdout.strip() == a.version,
            'it runs and prints the version %r (got %r %s)'
            % (a.version, p.stdout.strip(), p.stderr.strip()[-500:]))
    p = sh([exe, 'poll'], env=env)
    c.check(p.returncode == 0, 'liburoce linked: uroce_poll() before '
            'uroce_init() is -ENODEV (exit %d %s)'
            % (p.returncode, p.stderr.strip()[-500:]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--meson', required=True)
    ap.add_argument('--builddir', required=True)
    ap.add_argument('--srcdir', required=True)
    ap.add_argument('--version', required=True)
    ap.add_argument('--prefix', required=True)
    ap.add_argument('--bindir', required=True)
    ap.add_argument('--libdir', required=True)
    ap.add_argument('--datadir', required=True)
    ap.add_argument('--includedir', required=True)
    ap.add_argument('--mandir', required=True)
    ap.add_argument('--man-pages', type=int, required=True)
    ap.add_argument('--cc', required=True, help='the compiler command')
    ap.add_argument('--cflags', default='', help='e.g. -fsanitize=...')
    ap.add_argument('--ldflags', default='')
    a = ap.parse_args()
    c = Checker()
    with tempfile.TemporaryDirectory(prefix='uroce-install-test.') as dest:
        p = sh(a.meson.split() + ['install', '-C', a.builddir, '--destdir',
                                  dest, '--no-rebuild', '--quiet'])
        if not c.check(p.returncode == 0, 'meson install --destdir %s\n%s%s'
                       % (dest, p.stdout, p.stderr)):
            return 1
        top = under(dest, a.prefix)
        for root, dirs, files in sorted(os.walk(dest)):
            for f in sorted(files + [d for d in dirs
                                     if os.path.islink(os.path.join(root, d))]):
                print('  installed: %s' % os.path.relpath(
                    os.path.join(root, f), top))
        check_layout(c, a, top, a.srcdir)
        check_run(c, a, dest, top, a.builddir)
        check_man(c, a, top)
        check_pkgconfig(c, a, dest, top)
    print('%d failure(s)' % len(c.errors))
    return 1 if c.errors else 0


if __name__ == '__main__':
    sys.exit(main())
