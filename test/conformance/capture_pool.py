# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The uroce authors
"""Capture checks of one finished run, as many at a time as there are CPUs.

Each check of a capture is one CPU's work: tshark's passes over the file,
then the ICRC of every RoCEv2 frame in Python. The harnesses check a run's
captures once its processes have exited, when no engine lcore is busy, so
checks side by side take the CPUs from nothing. The workers are forked
from the harness (they see its functions and modules) at the first run
with more than one capture, and ended by close().
"""

import multiprocessing
import os

_POOL = []


def starmap(fn, arglist):
    """[fn(*args) for args in arglist], in that order, side by side."""
    arglist = list(arglist)
    ncpu = os.cpu_count() or 1
    if len(arglist) < 2 or ncpu < 2:
        return [fn(*args) for args in arglist]
    if not _POOL:
        _POOL.append(multiprocessing.get_context('fork').Pool(ncpu))
    return _POOL[0].starmap(fn, arglist)


def close():
    """End the workers (at the harness's exit)."""
    for pool in _POOL:
        pool.terminate()
        pool.join()
    _POOL.clear()
