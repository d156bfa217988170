#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The uroce authors
"""Stress the interop guest's command channel: the guest's CPU kept busy by
a shell loop while the host starts short commands in the background one
after the other and waits for each (a start, then polls: three requests
or more each). Prints how many went through, or after how many a request
got no answer (vm.REQUEST_TIMEOUT) or a wrong one. Root, the packages
guest.py lists; run it under the shared lock.

  channel_stress.py [COMMANDS]      (default 200)
"""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import guest  # noqa: E402
import vm  # noqa: E402


def main():
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    kernel, initrd = guest.build()
    n = 0
    t0 = time.monotonic()
    with vm.Guest(kernel, initrd) as g:
        g.start('exec sh -c "while :; do :; done"')
        try:
            while n < count:
                r = g.start('exec echo %d' % n).wait(time.monotonic() + 30)
                if r != (0, '%d\n' % n):
                    print('FAIL: command %d answered %r' % (n, r))
                    return 1
                n += 1
        except vm.GuestError as e:
            print('FAIL after %d commands: %s' % (n, str(e)[:200]))
            return 1
    print('ok: %d commands, %d requests in %.0f s' %
          (n, g.next_id - 1, time.monotonic() - t0))
    return 0


if __name__ == '__main__':
    sys.exit(main())
