#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The uroce authors
"""Reproduce the interop guest's command channel stopping: the guest's CPU
kept busy by a shell loop while the host starts short commands in the
background one after the other and waits for each. Prints how many went
through, or after how many a request got no answer (vm.REQUEST_TIMEOUT).
Root, the packages guest.py lists; run it under the shared lock.

  channel_stress.py [SECONDS]
"""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import guest  # noqa: E402
import vm  # noqa: E402


def main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 150
    kernel, initrd = guest.build()
    n = 0
    with vm.Guest(kernel, initrd) as g:
        g.start('exec sh -c "while :; do :; done"')
        end = time.monotonic() + seconds
        try:
            while time.monotonic() < end:
                r = g.start('exec echo %d' % n).wait(time.monotonic() + 30)
                if r != (0, '%d\n' % n):
                    print('FAIL: request %d answered %r' % (n, r))
                    return 1
                n += 1
        except vm.GuestError as e:
            print('FAIL after %d requests: %s' % (n, str(e)[:200]))
            return 1
    print('ok: %d requests' % n)
    return 0


if __name__ == '__main__':
    sys.exit(main())
