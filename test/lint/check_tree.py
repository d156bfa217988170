#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The uroce authors
"""Check the tracked tree: source only, and no history in it.

    check_tree.py [SOURCE_ROOT]     check the files git tracks there
    check_tree.py --selftest        check the checker on a scratch repo

Fails, naming FILE:LINE, when a tracked text file (source, header, script,
build file, doc, sample config) names a tracker issue or a work period
("issue 7", "issue #7", "session 14", "this session") or cites DESIGN.md,
a file the repository does not have (the design is docs/architecture.md).
History belongs in commit messages; comments, docs and program output say
what the code does and why.

Fails, naming the FILE, when a tracked file lives under a folder named
results/ or runs/: benchmark output is generated under the build folder
and is not kept in git.

Files git does not track (the build folder, a scratch run) are not looked
at. Exits 77 (meson's skip) only when SOURCE_ROOT is not a git checkout,
as in a release tarball: there is no list of tracked files to check.
"""

import os
import re
import subprocess
import sys
import tempfile

# Text that names a tracker issue or a work period. Case-insensitive.
RULES = [
    (re.compile(r'\bissues?\s*#?\d+', re.I), 'names a tracker issue'),
    (re.compile(r'\bsessions?\s*#?\d+', re.I), 'names a work session'),
    (re.compile(r'\b(this|that|last|next|previous|earlier|later) session\b',
                re.I), 'names a work session'),
    (re.compile(r'\bDESIGN\.md\b'),
     'cites DESIGN.md, which the tree does not have (docs/architecture.md)'),
    (re.compile(r'\bbefore/after\b', re.I), 'tells before/after history'),
    (re.compile(r'\btried and not kept\b|\(not kept\)', re.I),
     'tells what was tried and dropped'),
]

# Folders of generated benchmark output.
GENERATED_DIRS = ('results', 'runs')

# Files the text rules skip, each with the reason.
TEXT_ALLOW = {
    # This checker: its rules and its self-test spell the patterns out.
    'test/lint/check_tree.py',
}
# Folders the text rules skip, each with the reason.
TEXT_ALLOW_DIRS = (
    # Fuzzer seed inputs: raw frames and configs, not prose.
    'test/fuzz/corpus/',
    'test/fuzz/corpus_responder/',
)

# Tracked files allowed under results/ or runs/, each with the reason:
# only a small file a doc links to may stay (none does: the pacing plot is
# docs/img/pace.png).
GENERATED_ALLOW = set()


def tracked(root):
    """The files git tracks under root, or None if root is no checkout."""
    try:
        r = subprocess.run(['git', '-C', root, 'ls-files', '-z'],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           check=False)
    except OSError:
        return None
    if r.returncode != 0:
        return None
    files = [f for f in r.stdout.decode('utf-8', 'replace').split('\0') if f]
    return files or None


def check_text(root, path, out):
    """Append the lines of path that break a rule to out."""
    try:
        with open(os.path.join(root, path), 'rb') as f:
            data = f.read()
    except OSError:
        return		# tracked but deleted in the work tree, or a link
    if b'\0' in data:
        return		# binary
    text = data.decode('utf-8', 'replace')
    for n, line in enumerate(text.splitlines(), 1):
        for rx, why in RULES:
            m = rx.search(line)
            if m:
                out.append('%s:%d: %s: "%s"' % (path, n, why, m.group(0)))


def check(root, files):
    """The problems of the tracked files, one message each."""
    out = []
    for path in sorted(files):
        parts = path.split('/')[:-1]
        if (any(p in GENERATED_DIRS for p in parts) and
                path not in GENERATED_ALLOW):
            out.append('%s: generated benchmark output tracked in git '
                       '(a results/ or runs/ folder)' % path)
        if path in TEXT_ALLOW or path.startswith(TEXT_ALLOW_DIRS):
            continue
        check_text(root, path, out)
    return out


def selftest():
    """The checker finds each kind of problem, and passes a clean tree."""
    bad = {
        'lib/a.c': '/* ok */\n/* Pacing (issue 6): x */\n',
        'docs/b.md': 'fine\nfine\nAs seen in Session 14, x.\n',
        'lib/c.h': ' * Threads (DESIGN.md s2)\n',
        'bench/p/results/runs/r1.json': '{}\n',
        'bench/p/results/summary.txt': 'x\n',
        'README.md': 'a before/after table\n',
    }
    want = [
        'README.md:1: tells before/after history',
        'bench/p/results/runs/r1.json: generated',
        'bench/p/results/summary.txt: generated',
        'docs/b.md:3: names a work session',
        'lib/a.c:2: names a tracker issue',
        'lib/c.h:1: cites DESIGN.md',
    ]
    with tempfile.TemporaryDirectory() as d:
        if tracked(d) is not None:
            return fail('selftest: an empty folder counts as a checkout')
        env = dict(os.environ, GIT_CONFIG_GLOBAL='/dev/null',
                   GIT_CONFIG_NOSYSTEM='1')
        subprocess.run(['git', 'init', '-q', d], check=True, env=env)
        for path, text in bad.items():
            os.makedirs(os.path.dirname(os.path.join(d, path)) or d,
                        exist_ok=True)
            with open(os.path.join(d, path), 'w') as f:
                f.write(text)
        # Untracked: never looked at.
        with open(os.path.join(d, 'notes.txt'), 'w') as f:
            f.write('issue 9\n')
        subprocess.run(['git', '-C', d, 'add', '--'] + list(bad),
                       check=True, env=env)
        got = check(d, tracked(d))
        if len(got) != len(want) or any(not g.startswith(w)
                                         for g, w in zip(got, want)):
            return fail('selftest: got\n  %s\nwanted\n  %s' %
                        ('\n  '.join(got), '\n  '.join(want)))
        for path in bad:
            with open(os.path.join(d, path), 'w') as f:
                f.write('/* what the code does, and why */\n')
        subprocess.run(['git', '-C', d, 'rm', '-q', '-f', '--cached', '--',
                        'bench/p/results/runs/r1.json',
                        'bench/p/results/summary.txt'], check=True, env=env)
        got = check(d, tracked(d))
        if got:
            return fail('selftest: a clean tree failed:\n  %s' %
                        '\n  '.join(got))
    print('check_tree: selftest passed')
    return 0


def fail(msg):
    print(msg, file=sys.stderr)
    return 1


def main(argv):
    if argv[1:] == ['--selftest']:
        return selftest()
    if len(argv) > 2:
        return fail(__doc__)
    root = argv[1] if len(argv) == 2 else os.getcwd()
    files = tracked(root)
    if files is None:
        print('check_tree: %s is not a git checkout: nothing to check '
              '(skipped)' % root)
        return 77
    problems = check(root, files)
    for p in problems:
        print(p)
    if problems:
        print('check_tree: %d problem(s) in %d tracked files' %
              (len(problems), len(files)), file=sys.stderr)
        return 1
    print('check_tree: %d tracked files, no problem' % len(files))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
