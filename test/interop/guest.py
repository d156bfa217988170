#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The uroce authors
"""Build the interop guest from Debian packages: a kernel and an initramfs.

Nothing binary is kept in the tree. The kernel and its modules come from
Debian's linux-image-amd64 (the package its metapackage depends on),
downloaded with apt-get download and unpacked with dpkg-deb -x into the
cache, never installed as the host's kernel. The initramfs (newc cpio,
uncompressed: TCG unpacks it faster than it inflates gzip) holds:

  - busybox from busybox-static, and guest_init.sh as /init;
  - the rdma-core programs the tests run (ibverbs-utils, perftest,
    rdmacm-utils) and iproute2's rdma, tc and ip, with every shared
    library ldd names for them and for rxe's verbs provider, taken from
    the host's installed Debian packages;
  - the kernel modules of MODULES and what they depend on, in the order
    of modules.dep (made by busybox depmod over the unpacked tree), as
    /etc/modules.order for /init.

The cache (CACHE/KEY/{vmlinuz,initrd}) is keyed on the versions of every
package the guest is made of and on this script and /init; other keys
are removed when a new one is built. build() returns the two paths.

As a script: guest.py [--cache DIR] builds (or finds) the guest and
prints the two paths; exit 77 when a package is missing.
"""

import argparse
import glob
import hashlib
import os
import shutil
import stat
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
INIT = os.path.join(HERE, 'guest_init.sh')
KERNEL_META = 'linux-image-amd64'
# Host packages the guest's files come from (besides the kernel's).
PACKAGES = ['busybox-static', 'ibverbs-utils', 'ibverbs-providers',
            'libibverbs1', 'librdmacm1', 'perftest', 'rdmacm-utils',
            'iproute2']
PROGRAMS = ['ibv_devices', 'ibv_devinfo', 'ibv_rc_pingpong',
            'ibv_uc_pingpong', 'ibv_ud_pingpong', 'ibv_srq_pingpong',
            'ibv_xsrq_pingpong',
            'ib_send_bw', 'ib_send_lat', 'ib_write_bw', 'ib_write_lat',
            'ib_read_bw', 'ib_read_lat', 'ib_atomic_bw', 'ib_atomic_lat',
            'rping', 'ucmatose', 'udaddy', 'rdma', 'tc', 'ip']
PROVIDER = '/usr/lib/x86_64-linux-gnu/libibverbs/librxe-rdmav34.so'
PROVIDER_DRIVER = '/etc/libibverbs.d/rxe.driver'
# rxe, its ICRC's CRC-32 (the crypto API's, which rxe asks for by name
# when a device is added: no modprobe in the guest), the user verbs, the
# RDMA CM's user interface (rdma_ucm, which brings rdma_cm and ib_cm), the
# NIC, the virtio-serial port of the command channel, netem for the loss
# runs.
MODULES = ['virtio_pci', 'virtio_net', 'virtio_console', 'crc32_generic',
           'ib_uverbs', 'rdma_rxe', 'rdma_ucm', 'sch_netem']
# glibc opens it at run time for pthread_exit() and thread cancellation
# (rping's threads), so ldd does not name it.
DLOPENED = ['/lib/x86_64-linux-gnu/libgcc_s.so.1']
BUSYBOX = '/bin/busybox'
DEFAULT_CACHE = '/var/cache/uroce-interop'


class Missing(Exception):
    """A package or tool the guest needs is not on the host."""


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, capture_output=True, text=True,
                          timeout=600, **kw).stdout


def installed_version(pkg):
    out = subprocess.run(['dpkg-query', '-W', '-f=${Status} ${Version}',
                          pkg], capture_output=True, text=True)
    words = out.stdout.split()
    if out.returncode != 0 or words[:3] != ['install', 'ok', 'installed']:
        raise Missing('%s is not installed (apt-get install %s)' %
                      (pkg, pkg))
    return words[3]


def kernel_package():
    """(package, version) that linux-image-amd64 depends on."""
    deps = run(['apt-cache', 'depends', KERNEL_META])
    name = next((ln.split()[1] for ln in deps.splitlines()
                 if ln.strip().startswith('Depends: linux-image-')), None)
    if name is None:
        raise Missing('apt-cache knows no %s (apt-get update)' % KERNEL_META)
    pol = run(['apt-cache', 'policy', name])
    ver = next((ln.split()[1] for ln in pol.splitlines()
                if ln.strip().startswith('Candidate:')), None)
    if ver is None or ver == '(none)':
        raise Missing('no candidate for %s' % name)
    return name, ver


def cache_key(kpkg):
    h = hashlib.sha256()
    h.update(('%s=%s\n' % kpkg).encode())
    for p in PACKAGES:
        h.update(('%s=%s\n' % (p, installed_version(p))).encode())
    for f in (INIT, os.path.abspath(__file__)):
        with open(f, 'rb') as fh:
            h.update(fh.read())
    return h.hexdigest()[:16]


def unpack_kernel(kpkg, debs, work):
    """Download the kernel package (kept in debs) and unpack it into work.
    @return (vmlinuz path, modules dir)."""
    os.makedirs(debs, exist_ok=True)
    pattern = os.path.join(debs, '%s_*.deb' % kpkg[0])
    want = [d for d in glob.glob(pattern)
            if kpkg[1].replace(':', '%3a') in d]
    if not want:
        for d in glob.glob(pattern):
            os.unlink(d)
        run(['apt-get', 'download', '-q', '%s=%s' % kpkg], cwd=debs)
        want = glob.glob(pattern)
    run(['dpkg-deb', '-x', want[0], work])
    vmlinuz = glob.glob(os.path.join(work, 'boot', 'vmlinuz-*'))[0]
    kver = os.path.basename(vmlinuz)[len('vmlinuz-'):]
    run([BUSYBOX, 'depmod', '-b', work, kver])
    return vmlinuz, os.path.join(work, 'lib', 'modules', kver)


def module_order(moddir):
    """Relative paths of MODULES and their dependencies, each after the
    modules it depends on (modules.dep lists them deepest last)."""
    deps = {}
    with open(os.path.join(moddir, 'modules.dep')) as f:
        for line in f:
            mod, _, rest = line.partition(':')
            deps[mod] = rest.split()
    by_name = {os.path.basename(m)[:-len('.ko')].replace('-', '_'): m
               for m in deps}
    order = []

    def add(m):
        if m in order:
            return
        for d in reversed(deps[m]):
            add(d)
        order.append(m)
    for name in MODULES:
        if name not in by_name:
            raise Missing('the kernel package has no %s.ko' % name)
        add(by_name[name])
    return order


def shared_libs(paths):
    """Every shared library ldd names for paths (and their loader), as the
    system's loader finds them: without the caller's LD_LIBRARY_PATH
    (meson's test environment points it at uroce's libibverbs.so.1) or
    LD_PRELOAD."""
    env = {k: v for k, v in os.environ.items()
           if k not in ('LD_LIBRARY_PATH', 'LD_PRELOAD')}
    libs = set()
    for p in paths:
        for line in run(['ldd', p], env=env).splitlines():
            words = line.split()
            if '=>' in words:
                i = words.index('=>')
                if i + 1 < len(words) and words[i + 1].startswith('/'):
                    libs.add(words[i + 1])
            elif words and words[0].startswith('/'):
                libs.add(words[0])
    return libs


class Cpio:
    """A newc cpio archive written as it goes (the kernel's initramfs
    format)."""

    def __init__(self, path):
        self.f = open(path, 'wb')
        self.ino = 1
        self.dirs = set()

    def _entry(self, name, mode, data=b''):
        name = name.lstrip('/')
        hdr = '070701' + ''.join('%08x' % v for v in (
            self.ino, mode, 0, 0, 1, 0, len(data), 0, 0, 0, 0,
            len(name) + 1, 0))
        self.ino += 1
        out = hdr.encode() + name.encode() + b'\0'
        out += b'\0' * (-len(out) % 4)
        out += data + b'\0' * (-len(data) % 4)
        self.f.write(out)

    def mkdir(self, path):
        path = path.rstrip('/')
        if not path or path in self.dirs:
            return
        self.mkdir(os.path.dirname(path))
        self.dirs.add(path)
        self._entry(path, stat.S_IFDIR | 0o755)

    def file(self, path, data, mode=0o755):
        self.mkdir(os.path.dirname(path))
        self._entry(path, stat.S_IFREG | mode, data)

    def copy(self, src, dst=None):
        with open(src, 'rb') as f:
            self.file(dst or src, f.read())

    def symlink(self, path, target):
        self.mkdir(os.path.dirname(path))
        self._entry(path, stat.S_IFLNK | 0o777, target.encode())

    def close(self):
        self._entry('TRAILER!!!', 0)
        self.f.close()


def write_initrd(path, moddir, order):
    progs = []
    for p in PROGRAMS:
        w = shutil.which(p, path='/usr/sbin:/usr/bin:/sbin:/bin')
        if w is None:
            raise Missing('%s is not installed' % p)
        progs.append(os.path.realpath(w))
    for f in [BUSYBOX, PROVIDER, PROVIDER_DRIVER] + DLOPENED:
        if not os.path.exists(f):
            raise Missing('%s is not installed' % f)
    c = Cpio(path)
    for d in ('bin', 'sbin', 'usr/bin', 'usr/sbin', 'etc', 'proc', 'sys',
              'dev', 'tmp', 'run', 'lib64'):
        c.mkdir(d)
    c.copy(BUSYBOX, '/bin/busybox')
    c.copy(INIT, '/init')
    for p in progs:
        c.copy(p, '/usr/bin/' + os.path.basename(p))
    c.copy(PROVIDER)
    c.copy(PROVIDER_DRIVER)
    for lib in sorted(shared_libs(progs + [PROVIDER]) | set(DLOPENED)):
        # The loader path ldd prints (/lib64/...) and the library paths
        # (/lib/x86_64-linux-gnu/...) are symlinks on a merged-/usr host:
        # the guest gets the files at those paths.
        c.copy(os.path.realpath(lib), lib)
    for m in order:
        c.copy(os.path.join(moddir, m), '/lib/modules/' + m)
    c.file('/etc/modules.order', ''.join(m + '\n' for m in order).encode(),
           0o644)
    c.file('/etc/passwd', b'root:x:0:0:root:/:/bin/sh\n', 0o644)
    c.close()


def build(cache=DEFAULT_CACHE, log=print):
    """(vmlinuz, initrd) of the guest, built into cache unless there."""
    kpkg = kernel_package()
    key = cache_key(kpkg)
    out = os.path.join(cache, key)
    vmlinuz, initrd = os.path.join(out, 'vmlinuz'), os.path.join(out,
                                                                 'initrd')
    if os.path.exists(vmlinuz) and os.path.exists(initrd):
        return vmlinuz, initrd
    log('interop guest: building %s (%s %s) in %s' % (key, kpkg[0], kpkg[1],
                                                       cache))
    os.makedirs(cache, exist_ok=True)
    for old in glob.glob(os.path.join(cache, '*')):
        if os.path.basename(old) not in ('debs', key):
            shutil.rmtree(old, ignore_errors=True)
    work = tempfile.mkdtemp(prefix='kernel-', dir=cache)
    try:
        kimg, moddir = unpack_kernel(kpkg, os.path.join(cache, 'debs'), work)
        order = module_order(moddir)
        tmp = tempfile.mkdtemp(prefix='new-', dir=cache)
        shutil.copyfile(kimg, os.path.join(tmp, 'vmlinuz'))
        write_initrd(os.path.join(tmp, 'initrd'), moddir, order)
        os.rename(tmp, out)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return vmlinuz, initrd


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--cache', default=DEFAULT_CACHE)
    a = ap.parse_args()
    try:
        paths = build(a.cache)
    except Missing as e:
        print('SKIP: %s' % e)
        return 77
    print('\n'.join(paths))
    return 0


if __name__ == '__main__':
    sys.exit(main())
