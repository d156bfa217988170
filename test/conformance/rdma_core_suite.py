#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The uroce authors
"""rdma-core's own test suite (python3-pyverbs; Debian ships it gzipped in
/usr/share/doc/rdma-core/tests) on a uroce device, under uroce-run.

Every test must pass, be skipped for a reason in SKIPS, each of which is
true of a software RoCE device (another vendor's device, GPU memory, NIC
memory) or names a feature uroce does not offer yet, or be one of the
KNOWN failures, each a feature not built yet whose test errors instead of
skipping (docs/verbs.md, "rdma-core's test suite", lists both). Any other
failure or error fails this check, as does a skip for a reason not in
the table, and a KNOWN test that passes (take it off the list).

  rdma_core_suite.py --run UROCE_RUN --conf CONF [--tests DIR] [--dev uroce0]
                     [--keep DIR] [PATTERN...]

PATTERNs are passed to run_tests.py (-k) to run a subset.
Exit 0 pass, 1 fail, 77 when pyverbs or the tests are not installed.
"""

import argparse
import gzip
import os
import re
import shutil
import subprocess
import sys
import tempfile

SKIP = 77
TESTS = '/usr/share/doc/rdma-core/tests'
TIMEOUT = 900

# Skip reasons accepted, as regular expressions over the reason
# unittest prints, with the class of reason (docs/verbs.md explains).
SKIPS = [
    # Tests of another vendor's device or its direct-verbs extensions.
    (r"Can not run the test over non (MLX5|EFA) device", 'vendor'),
    (r"Could not open mlx5 context", 'vendor'),
    (r"Device memory is not supported", 'no NIC memory'),
    (r"PCI device must be passed by the user", 'vendor'),
    # mlx5dv_ts_to_ns(): a ConnectX clock's conversion, mlx5 direct verbs
    # (the completion timestamps themselves were read).
    (r"Converting timestamp to nanoseconds is not supported", 'vendor'),
    # GPU memory: no GPU and no CUDA here.
    (r"Allocating dmabuf is not supported by /dev/dri/renderD\d+", 'no GPU'),
    (r"cuda-python [\d.]+\+ must be installed", 'no GPU'),
    # The rdma_cm tests look for the device's kernel netdev in sysfs
    # (/sys/class/infiniband/DEV/device/net): a userspace device has none.
    (r"Device \S+ doesn't have net interface", 'no kernel netdev'),
    # Not offered yet (docs/verbs.md: "Not yet").
    # IBV_QP_EX_WITH_RDMA_ATOMIC_WRITE (a ConnectX-7 opcode, no IBTA one).
    (r"Extended QP is not supported on this device", 'vendor opcode'),
]

# Tests that fail because a feature is missing and the test does not skip
# on EOPNOTSUPP: {test id: why}.
KNOWN = {}

NAME_RE = re.compile(r'^(test\w*) \(([\w.]+)\)')
SKIPPED_RE = re.compile(r"skipped ['\"](.*)['\"]$")


def unpack(src, dst):
    """The tests folder with its .gz files unpacked (run_tests.py imports
    them as modules)."""
    os.makedirs(dst)
    for name in os.listdir(src):
        path = os.path.join(src, name)
        if name.endswith('.gz'):
            with gzip.open(path) as fi, open(
                    os.path.join(dst, name[:-3]), 'wb') as fo:
                shutil.copyfileobj(fi, fo)
        elif os.path.isfile(path):
            shutil.copy(path, dst)


def wrap(cmd):
    """In a sanitizer build, the runtime our library needs preloaded into
    python (never into uroce-run, which carries its own)."""
    pre = os.environ.get('UROCE_TEST_PRELOAD')
    if pre:
        return ['env', 'LD_PRELOAD=' + pre,
                'ASAN_OPTIONS=detect_leaks=0'] + cmd
    return cmd


OUTCOME_RE = re.compile(r"^(ok|FAIL|ERROR|expected failure|"
                        r"unexpected success|skipped ['\"].*['\"])$")


def classify(log):
    """{test: outcome} from run_tests.py -v's log; outcome 'ok',
    'skip: REASON', 'FAIL', 'ERROR', 'expected failure', ..."""
    out = {}
    lines = log.splitlines()
    for i, line in enumerate(lines):
        m = re.match(r'^(.*?) \.\.\. (.*)$', line)
        if not m:
            continue
        # A test with a docstring is printed as "test_x (mod.Class.test_x)"
        # and, on the next line, the docstring's first line and the result.
        n = NAME_RE.match(m.group(1)) or (i and NAME_RE.match(lines[i - 1]))
        if not n:
            continue
        res = m.group(2).strip()
        # What a test prints comes before its result, on the same line.
        j = i + 1
        while not OUTCOME_RE.match(res) and j < len(lines) and \
                not NAME_RE.match(lines[j]):
            res = lines[j].strip()
            j += 1
        s = SKIPPED_RE.match(res)
        out[n.group(2)] = 'skip: ' + s.group(1) if s else res
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--run', required=True, help='uroce-run')
    ap.add_argument('--conf', required=True)
    ap.add_argument('--tests', default=TESTS)
    ap.add_argument('--dev', default='uroce0')
    ap.add_argument('--keep', help='keep the log here')
    ap.add_argument('patterns', nargs='*')
    a = ap.parse_args()
    a.run = os.path.abspath(a.run)
    a.conf = os.path.abspath(a.conf)

    if not os.path.isdir(a.tests):
        print('rdma-core tests not installed (%s): skipped' % a.tests)
        return SKIP
    r = subprocess.run(wrap(['/usr/bin/python3', '-c',
                             'import pyverbs.device']), capture_output=True)
    if r.returncode != 0:
        print('python3-pyverbs not installed: skipped')
        return SKIP

    tmp = tempfile.mkdtemp(prefix='uroce-rdma-core-')
    try:
        unpack(a.tests, os.path.join(tmp, 'tests'))
        cmd = [a.run, '-c', a.conf, '--'] + wrap(
            ['/usr/bin/python3', 'tests/run_tests.py', '--dev', a.dev,
             '--gid', '0', '-v'])
        for p in a.patterns:
            cmd += ['-k', p]
        try:
            r = subprocess.run(cmd, cwd=tmp, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, timeout=TIMEOUT)
            log, rc = r.stdout.decode(errors='replace'), r.returncode
        except subprocess.TimeoutExpired as e:
            log = (e.stdout or b'').decode(errors='replace')
            rc = 'timeout after %d s' % TIMEOUT
        if a.keep:
            with open(a.keep, 'w') as f:
                f.write(log)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    res = classify(log)
    bad = []
    counts = {}
    for name, outcome in sorted(res.items()):
        if outcome == 'ok':
            kind = 'passed'
        elif outcome.startswith('skip: '):
            reason = outcome[6:]
            why = next((w for rx, w in SKIPS if re.search(rx, reason)), None)
            if why is None:
                bad.append('%s: skipped for a reason not accepted: %s' %
                           (name, reason))
                kind = 'bad skip'
            else:
                kind = 'skipped (%s)' % why
        elif name in KNOWN:
            kind = 'known failures'
        else:
            bad.append('%s: %s' % (name, outcome))
            kind = 'failed'
        if name in KNOWN and kind != 'known failures':
            bad.append('%s: %s, but it is in KNOWN: take it off' %
                       (name, outcome))
        counts[kind] = counts.get(kind, 0) + 1
    m = re.search(r'^Ran (\d+) tests? in', log, re.M)
    ran = int(m.group(1)) if m else 0
    for k in sorted(counts):
        print('%5d %s' % (counts[k], k))
    if ran == 0 or ran != len(res):
        bad.append('run_tests.py ran %d tests, %d results read (exit %s)' %
                   (ran, len(res), rc))
    if not bad and rc != 0 and not any(n in res for n in KNOWN):
        bad.append('run_tests.py exited %s' % rc)
    if bad:
        print('\n'.join(bad))
        # The tracebacks, for the failures.
        i = log.find('\n=====')
        if i >= 0:
            print(log[i:i + 20000])
        return 1
    known = counts.get('known failures', 0)
    print('rdma-core suite: %d tests, none failed%s' %
          (ran, ' but the %d known' % known if known else ''))
    return 0


if __name__ == '__main__':
    sys.exit(main())
