#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The uroce authors
"""The man pages document what the programs accept: every section and key
of the configuration parser in uroce.conf(5), every option of
`uroce-run --help` in uroce-run(1) and of `uroce-perf --help` in
uroce-perf(1).

The parser is asked, not read: a file with an unknown section, and one
with an unknown key in [port] and in [eal], make it print what it knows
("unknown key (known: dev, ip, ...)"). uroce-perf loads the file before it
starts DPDK, so nothing else runs. Each key must have its own entry,
"*key* = ...", under the man page's "# [port] KEYS" or "# [eal] KEYS"
heading, and each section a "*[section]*" entry under "# SECTIONS".
An option is a line of --help that starts with it ("  -c, --config FILE",
"      --server", "  -v"); each must open an entry of the page's OPTIONS
("*-c, --config* _FILE_", "*--server*").
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile

PORT = '[port]\ndev = ringlink:mankeys,side=0\nip = 192.168.79.1/24\n'
PROBE = 'uroce_man_probe'


def known(perf, text, what):
    """The list after "(known: " in the parser's one-line error."""
    with tempfile.NamedTemporaryFile('w', suffix='.conf') as f:
        f.write(text)
        f.flush()
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(('UROCE_PORT', 'UROCE_EAL_',
                                    'UROCE_NEIGH_'))}
        p = subprocess.run([perf, '-c', f.name, '--loop'], env=env,
                           capture_output=True, text=True, timeout=60,
                           stdin=subprocess.DEVNULL)
    m = re.search(r'unknown %s \(known: ([^)]*)\)' % what, p.stderr)
    if p.returncode == 0 or m is None:
        sys.exit('FAIL the parser did not list the known %ss (exit %d): %r'
                 % (what, p.returncode, p.stderr))
    return [k.strip() for k in m.group(1).split(',')]


def section(page, title):
    """The text under the heading "# TITLE", up to the next "# "."""
    m = re.search(r'^# %s\n(.*?)(?=^# |\Z)' % re.escape(title), page,
                  re.S | re.M)
    return m.group(1) if m else ''


def options(prog, page_file):
    """The options of `prog --help` missing from page_file's OPTIONS."""
    p = subprocess.run([prog, '--help'], capture_output=True, text=True,
                       timeout=60, stdin=subprocess.DEVNULL)
    opts = re.findall(r'^\s+(-\w(?:, --[a-z][a-z-]*)?|--[a-z][a-z-]*)'
                      r'(?=[ ,]|$)', p.stdout, re.M)
    if p.returncode != 0 or len(opts) < 2:
        sys.exit('FAIL %s --help listed no options (exit %d)'
                 % (prog, p.returncode))
    text = section(open(page_file).read(), 'OPTIONS')
    missing = []
    for o in opts:
        ok = re.search(r'^\*%s[* ]' % re.escape(o), text, re.M)
        print('%s %s %s' % ('ok  ' if ok else 'FAIL',
                            os.path.basename(prog), o))
        if not ok:
            missing.append('%s %s' % (os.path.basename(prog), o))
    return missing


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--perf', required=True, help='uroce-perf')
    ap.add_argument('--run', required=True, help='uroce-run')
    ap.add_argument('--page', required=True, help='man/uroce.conf.5.scd')
    ap.add_argument('--perf-page', required=True, help='man/uroce-perf.1.scd')
    ap.add_argument('--run-page', required=True, help='man/uroce-run.1.scd')
    a = ap.parse_args()
    page = open(a.page).read()
    keys = {
        'port': known(a.perf, PORT + PROBE + ' = 1\n', 'key'),
        'eal': known(a.perf, PORT + '[eal]\n' + PROBE + ' = 1\n', 'key'),
    }
    sects = known(a.perf, PORT + '[%s]\n' % PROBE, 'section')
    missing = []
    for sect, names in keys.items():
        text = section(page, '[%s] KEYS' % sect)
        for k in names:
            ok = re.search(r'^\*%s\* =' % re.escape(k), text, re.M)
            print('%s [%s] %s' % ('ok  ' if ok else 'FAIL', sect, k))
            if not ok:
                missing.append('[%s] %s' % (sect, k))
    text = section(page, 'SECTIONS')
    for s in sects:
        # "port1..port15" stands for the numbered port sections.
        s = s.split('..')[0]
        ok = ('*[%s]*' % s) in text
        print('%s section [%s]' % ('ok  ' if ok else 'FAIL', s))
        if not ok:
            missing.append('section [%s]' % s)
    n = sum(len(v) for v in keys.values())
    if n < 10:
        sys.exit('FAIL only %d keys found: the parser output changed?' % n)
    if missing:
        print('not in %s: %s' % (a.page, ', '.join(missing)))
    missing_opts = options(a.perf, a.perf_page) + options(a.run, a.run_page)
    if missing_opts:
        print('not in their man pages: %s' % ', '.join(missing_opts))
    if missing or missing_opts:
        return 1
    print('%d keys, %d sections and every option documented'
          % (n, len(sects)))
    return 0


if __name__ == '__main__':
    sys.exit(main())
