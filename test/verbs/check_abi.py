#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The uroce authors
"""Compare the ABI of our libibverbs.so.1 with the installed rdma-core one.

For every exported symbol: name, version node, default (@@) or not (@),
type (FUNC/OBJECT) and, for data, size; and the version definitions with
their parents. Any difference fails, listed one per line. Exit 77 (skip)
when the real library is not installed.

Ours may have version nodes named UROCE_PRIVATE_<n> beyond rdma-core's,
each without a parent and after all of rdma-core's, holding functions
only (uroce's librdmacm.so.1 reaches the stack through them): those nodes
and their symbols are set aside and listed, every other difference fails.

    check_abi.py --ours build/lib/verbs/libibverbs.so.1 \
                 [--real /usr/lib/x86_64-linux-gnu/libibverbs.so.1]
"""

import argparse
import os
import re
import subprocess
import sys

REAL = '/usr/lib/x86_64-linux-gnu/libibverbs.so.1'
SKIP = 77


def readelf(args, lib):
    return subprocess.run(['readelf', '-W'] + args + [lib], check=True,
                          capture_output=True, text=True).stdout


def exported(lib):
    """{(name, version, is_default): (type, size)} of the defined symbols."""
    syms = {}
    for line in readelf(['--dyn-syms'], lib).splitlines():
        f = line.split()
        # Num: Value Size Type Bind Vis Ndx Name
        if len(f) < 8 or not f[0].endswith(':') or f[6] in ('UND', 'Ndx'):
            continue
        if f[4] not in ('GLOBAL', 'WEAK'):
            continue
        m = re.match(r'^([^@]+)(@@?)(.*)$', f[7])
        if m is None:
            key = (f[7], None, True)     # unversioned: never in the real one
        else:
            key = (m.group(1), m.group(3), m.group(2) == '@@')
        if f[6] == 'ABS' and key[1] is None:
            continue                     # a version node's own symbol
        size = int(f[2], 0) if f[3] == 'OBJECT' else None
        syms[key] = (f[3], size)
    return syms


def verdefs(lib):
    """[(name, parent or None)] in order, without the BASE entry."""
    out, cur = [], None
    section = readelf(['-V'], lib).split("Version needs")[0]
    for line in section.splitlines():
        m = re.search(r'Flags: (\S+).*Name: (\S+)', line)
        if m:
            cur = None if m.group(1) == 'BASE' else [m.group(2), None]
            if cur:
                out.append(cur)
            continue
        m = re.search(r'Parent 1: (\S+)', line)
        if m and cur:
            cur[1] = m.group(1)
    return [tuple(v) for v in out]


PRIVATE_RE = re.compile(r'^UROCE_PRIVATE_[0-9]+$')


def split_private(syms, nodes, errors):
    """Take our UROCE_PRIVATE_* symbols and nodes out of syms and nodes;
    what breaks their rules goes to errors."""
    priv = [n for n in nodes if PRIVATE_RE.match(n[0])]
    rest = [n for n in nodes if not PRIVATE_RE.match(n[0])]
    if priv and nodes[len(rest):] != priv:
        errors.append('UROCE_PRIVATE_* nodes must come after rdma-core\'s: '
                      '%s' % [n[0] for n in nodes])
    for name, parent in priv:
        if parent is not None:
            errors.append('%s has a parent (%s)' % (name, parent))
    out = {}
    for k, v in list(syms.items()):
        if k[1] is not None and PRIVATE_RE.match(k[1]):
            del syms[k]
            out[k] = v
            if v[0] != 'FUNC' or not k[2]:
                errors.append('private: %s is not a default FUNC (%s)' %
                              (fmt(k), v[0]))
    for name, _ in priv:
        if not any(k[1] == name for k in out):
            errors.append('private node %s exports nothing' % name)
    return out, rest


def fmt(key):
    name, ver, dflt = key
    return name if ver is None else '%s%s%s' % (name, '@@' if dflt else '@',
                                                ver)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--ours', required=True)
    ap.add_argument('--real', default=REAL)
    a = ap.parse_args()
    if not os.path.exists(a.real):
        print('SKIP: %s not installed (apt-get install libibverbs1)' % a.real)
        return SKIP
    real, ours = exported(a.real), exported(a.ours)
    errors = []
    priv, vo = split_private(ours, verdefs(a.ours), errors)
    for k in sorted(set(real) - set(ours), key=fmt):
        errors.append('missing: %s (%s)' % (fmt(k), real[k][0]))
    for k in sorted(set(ours) - set(real), key=fmt):
        errors.append('extra: %s (%s)' % (fmt(k), ours[k][0]))
    for k in sorted(set(ours) & set(real), key=fmt):
        if ours[k] != real[k]:
            errors.append('differs: %s: ours %s, real %s' %
                          (fmt(k), ours[k], real[k]))
    vr = verdefs(a.real)
    if vr != vo:
        errors.append('version nodes differ:\n  real %s\n  ours %s' % (vr, vo))
    n_def = sum(1 for k in real if k[2])
    print('real: %d symbols (%d default, %d compat), %d version nodes' %
          (len(real), n_def, len(real) - n_def, len(vr)))
    if not real or not vr:
        errors.append('nothing read from %s: the check itself is broken'
                      % a.real)
    for k in sorted(priv, key=fmt):
        print('private: %s' % fmt(k))
    for e in errors:
        print('FAIL ' + e)
    if errors:
        return 1
    print('OK: %s exports exactly the same symbols and versions' % a.ours)
    return 0


if __name__ == '__main__':
    sys.exit(main())
