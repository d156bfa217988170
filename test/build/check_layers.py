#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The uroce authors
"""Check the layering of lib/components.txt against the sources and the build.

The table lists each component, its folder and the components it uses, each
after the ones it uses. The rules:
  - a component's file includes only headers of its own folder, its own
    include/ and the include/ folders of the components it names as used
    (a file in include/ only the include/ folders); <uroce/...> only when
    it uses "api" (include/);
  - app/ and bench/ include only their own folder, include/ and the
    components' include/ folders;
  - test/ files may also include test/common and, in a folder whose
    meson.build names C_test_dep, component C's private headers;
  - include/ folders hold headers only and no *_priv.h; every folder of
    lib/ is in the table;
  - with --build-dir: each component's library is compiled with no folder
    of the source tree beyond its own, its include/ and the include/ of
    what it uses (and what those use).
Every quoted #include must resolve in an allowed folder. Any violation is
printed as FILE:LINE: reason, and the exit status is 1.

    check_layers.py --source-root . [--build-dir build]
    check_layers.py --selftest
"""

import argparse
import json
import os
import re
import shutil
import sys
import tempfile

INCLUDE_RE = re.compile(r'^\s*#\s*include\s*([<"])([^">]+)[">]')
TABLE = os.path.join('lib', 'components.txt')
# Components built as shared libraries of their own, not as uroce_<name>.
SHARED = ('api', 'verbs', 'rdmacm')
SCANNED = ('lib', 'pmd_glue', 'include', 'app', 'bench', 'test')


def read_table(root, errors):
    """[(name, folder, [uses])] in file order; order errors into errors."""
    comps = []
    seen = set()
    with open(os.path.join(root, TABLE)) as f:
        for n, line in enumerate(f, 1):
            fields = line.split('#', 1)[0].split()
            if not fields:
                continue
            where = '%s:%d' % (TABLE, n)
            if len(fields) < 2:
                errors.append('%s: want NAME FOLDER [USES...]' % where)
                continue
            name, folder, uses = fields[0], fields[1], fields[2:]
            if name in seen:
                errors.append('%s: %s listed twice' % (where, name))
            for u in uses:
                if u not in seen:
                    errors.append('%s: %s uses %s, which is not listed '
                                  'before it' % (where, name, u))
            if not os.path.isdir(os.path.join(root, folder)):
                errors.append('%s: no folder %s' % (where, folder))
            seen.add(name)
            comps.append((name, folder, uses))
    return comps


def public_dir(name, folder):
    # "api" is the include/ folder itself; a component's is its include/.
    return folder if name == 'api' else os.path.join(folder, 'include')


def closure(comps, name):
    uses = {c[0]: c[2] for c in comps}
    out, todo = set(), list(uses.get(name, []))
    while todo:
        u = todo.pop()
        if u not in out:
            out.add(u)
            todo.extend(uses.get(u, []))
    return out


class Layout:
    def __init__(self, root, comps):
        self.root = root
        self.comps = comps
        self.folder = {c[0]: c[1] for c in comps}
        self.uses = {c[0]: c[2] for c in comps}
        self.pub = {c[0]: public_dir(c[0], c[1]) for c in comps}
        self.all_pub = [self.pub[c[0]] for c in comps if c[0] != 'api']
        self.test_deps = {}

    def owner(self, rel):
        """(component, in_include) of a path, or (None, False)."""
        best = None
        for name, folder, _ in self.comps:
            if name == 'api':
                continue
            if rel.startswith(folder + os.sep):
                if best is None or len(folder) > len(self.folder[best]):
                    best = name
        if best is None:
            return None, False
        return best, rel.startswith(self.pub[best] + os.sep)

    def suite_test_deps(self, folder):
        """Components whose C_test_dep the folder's meson.build names."""
        if folder not in self.test_deps:
            names = set()
            mb = os.path.join(self.root, folder, 'meson.build')
            if os.path.isfile(mb):
                text = open(mb).read()
                for name in self.folder:
                    if re.search(r'\b%s_test_dep\b' % re.escape(name), text):
                        names.add(name)
            self.test_deps[folder] = names
        return self.test_deps[folder]

    def allowed(self, rel):
        """(folders a quoted include may resolve in, api allowed, who)."""
        dirs, api_ok, who = self._allowed(rel)
        if dirs is not None:
            dirs = list(dict.fromkeys(dirs))
        return dirs, api_ok, who

    def _allowed(self, rel):
        d = os.path.dirname(rel)
        comp, in_inc = self.owner(rel)
        if comp is not None:
            dirs = [self.pub[comp]]
            if not in_inc:
                dirs.insert(0, d)
                dirs.insert(1, self.folder[comp])
            dirs += [self.pub[u] for u in self.uses[comp] if u != 'api']
            return dirs, 'api' in self.uses[comp], comp
        top = rel.split(os.sep)[0]
        if top == 'include':
            return [d, 'include'], True, 'include/'
        if top in ('app', 'bench'):
            return [d] + self.all_pub, True, top + '/'
        if top == 'test':
            dirs = [d, os.path.join('test', 'common')] + self.all_pub
            for name in sorted(self.suite_test_deps(d)):
                dirs.append(self.folder[name])
            return dirs, True, 'test/'
        return None, False, None

    def where(self, path):
        """Who owns a resolved header, for the message."""
        comp, in_inc = self.owner(path)
        if comp is None:
            return path
        return '%s (%s header of %s)' % (
            path, 'public' if in_inc else 'private', comp)


def find_header(root, dirs, name):
    for d in dirs:
        p = os.path.normpath(os.path.join(d, name))
        if os.path.isfile(os.path.join(root, p)):
            return p
    return None


def project_files(root):
    for top in SCANNED:
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, top)):
            dirnames[:] = sorted(x for x in dirnames if not x.startswith('.'))
            for fn in sorted(filenames):
                if fn.endswith(('.c', '.h')):
                    yield os.path.relpath(os.path.join(dirpath, fn), root)


def every_folder(root):
    out = []
    for top in SCANNED:
        for dirpath, dirnames, _ in os.walk(os.path.join(root, top)):
            dirnames[:] = [x for x in dirnames if not x.startswith('.')]
            out.append(os.path.relpath(dirpath, root))
    return out


def check_sources(root, lay, errors):
    folders = every_folder(root)
    for name, folder, _ in lay.comps:
        if name == 'api':
            continue
        inc = lay.pub[name]
        if not os.path.isdir(os.path.join(root, inc)):
            # A leaf (a library nothing else builds on) needs none.
            if any(name in c[2] for c in lay.comps):
                errors.append('%s: %s has no include/ folder' % (TABLE, name))
            continue
        for fn in sorted(os.listdir(os.path.join(root, inc))):
            if not fn.endswith('.h') or fn.endswith('_priv.h'):
                errors.append('%s: not a public header' %
                              os.path.join(inc, fn))
    listed = set(c[1] for c in lay.comps)
    for d in sorted(os.listdir(os.path.join(root, 'lib'))):
        rel = os.path.join('lib', d)
        if os.path.isdir(os.path.join(root, rel)) and rel not in listed:
            errors.append('%s: a folder of lib/ that %s does not list' %
                          (rel, TABLE))

    for rel in project_files(root):
        dirs, api_ok, who = lay.allowed(rel)
        if dirs is None:
            continue
        with open(os.path.join(root, rel), errors='replace') as f:
            lines = f.readlines()
        for n, line in enumerate(lines, 1):
            m = INCLUDE_RE.match(line)
            if m is None:
                continue
            kind, name = m.groups()
            loc = '%s:%d' % (rel, n)
            if kind == '<':
                if name.startswith('uroce/') and not api_ok:
                    errors.append('%s: <%s>: %s does not use api (include/)'
                                  % (loc, name, who))
                continue
            if find_header(root, dirs, name) is not None:
                continue
            found = find_header(root, folders, name)
            if found is None:
                errors.append('%s: "%s" is in none of the folders %s may '
                              'use (%s)' % (loc, name, who, ' '.join(dirs)))
            else:
                errors.append('%s: "%s" is %s, which %s may not include '
                              '(it may: %s)' % (loc, name, lay.where(found),
                                                who, ' '.join(dirs)))


def check_build(root, build, lay, errors):
    """The -I folders of each component's library, from meson's intro."""
    intro = os.path.join(build, 'meson-info', 'intro-targets.json')
    try:
        targets = json.load(open(intro))
    except OSError as e:
        errors.append('%s: %s' % (intro, e.strerror))
        return
    root_abs = os.path.realpath(root)
    by_name = {t['name']: t for t in targets}
    for name, folder, _ in lay.comps:
        if name in SHARED:
            continue
        t = by_name.get('uroce_' + name)
        if t is None:
            errors.append('%s: no library uroce_%s in the build' %
                          (TABLE, name))
            continue
        ok = {folder, lay.pub[name]}
        ok |= {lay.pub[u] for u in closure(lay.comps, name)}
        for src in t.get('target_sources', []):
            for p in src.get('parameters', []):
                if not p.startswith('-I'):
                    continue
                path = os.path.realpath(p[2:])
                if os.path.commonpath([path, root_abs]) != root_abs:
                    continue
                rel = os.path.relpath(path, root_abs)
                if rel not in ok and not rel.startswith(
                        os.path.relpath(os.path.realpath(build), root_abs)):
                    errors.append('uroce_%s is compiled with -I%s, which '
                                  '%s does not allow' % (name, rel, TABLE))


def run(root, build=None):
    errors = []
    comps = read_table(root, errors)
    lay = Layout(root, comps)
    if not errors:
        check_sources(root, lay, errors)
        if build is not None:
            check_build(root, build, lay, errors)
    return errors


def write(root, rel, text):
    p = os.path.join(root, rel)
    os.makedirs(os.path.dirname(p), exist_ok=True)
    with open(p, 'w') as f:
        f.write(text)


def selftest():
    """A small tree: clean, then each kind of violation alone."""
    table = ('api include\nlow lib/low\nhigh lib/high low\n'
             'top pmd_glue high\n')
    base = {
        TABLE: table,
        'include/uroce/uroce.h': '',
        'lib/low/include/uroce_low.h': '',
        'lib/low/low_priv.h': '',
        'lib/low/low.c': '#include "low_priv.h"\n#include "uroce_low.h"\n',
        'lib/high/include/uroce_high.h': '#include "uroce_low.h"\n',
        'lib/high/high.c': '#include "uroce_high.h"\n',
        'pmd_glue/include/uroce_top.h': '',
        'pmd_glue/top.c': '#include "uroce_high.h"\n',
        'app/x/x.c': '#include <uroce/uroce.h>\n#include "uroce_top.h"\n',
        'test/unit/meson.build': 'deps = [low_test_dep]\n',
        'test/unit/t.c': '#include "low_priv.h"\n',
        'test/common/h.h': '#include "uroce_high.h"\n',
    }
    cases = {
        'clean': {},
        'private across components': {
            'lib/high/high.c': '#include "low_priv.h"\n'},
        'public header including a private one': {
            'lib/high/include/uroce_high.h': '#include "high_priv.h"\n',
            'lib/high/high_priv.h': ''},
        'use not declared': {
            'lib/low/low.c': '#include "uroce_high.h"\n'},
        'api not declared': {
            'lib/high/high.c': '#include <uroce/uroce.h>\n'},
        'app with a private header': {
            'app/x/x.c': '#include "low_priv.h"\n'},
        'bench with test/common': {
            'bench/b.c': '#include "h.h"\n'},
        'test without the test dep': {
            'test/unit/meson.build': ''},
        'use listed after': {
            TABLE: 'api include\nhigh lib/high low\nlow lib/low\n'
                   'top pmd_glue high\n'},
        'private header in include/': {
            'lib/low/include/x_priv.h': ''},
        'folder not listed': {
            'lib/other/o.c': ''},
    }
    failed = 0
    for case, extra in cases.items():
        tmp = tempfile.mkdtemp(prefix='check_layers.')
        try:
            files = dict(base)
            files.update(extra)
            for rel, text in files.items():
                write(tmp, rel, text)
            errors = run(tmp)
        finally:
            shutil.rmtree(tmp)
        want_clean = case == 'clean'
        if want_clean != (not errors):
            failed += 1
            print('selftest %s: %s' % (case, errors or 'no violation found'))
        else:
            print('selftest %s: ok %s' % (case, errors[:1]))
    return 1 if failed else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--source-root', default='.')
    ap.add_argument('--build-dir')
    ap.add_argument('--selftest', action='store_true')
    a = ap.parse_args()
    if a.selftest:
        return selftest()
    errors = run(a.source_root, a.build_dir)
    for e in errors:
        print(e)
    if errors:
        print('%d layering violation(s); the rules: %s' % (len(errors), TABLE))
        return 1
    print('layering holds: %s' % TABLE)
    return 0


if __name__ == '__main__':
    sys.exit(main())
