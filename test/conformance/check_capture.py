#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The uroce authors
"""Check a port's pcapng capture (`[port] pcap = FILE`) of a real run.

  - tshark decodes every frame with no malformed packet and no expert
    item of warning or error severity, and every UDP 4791 frame as
    RoCEv2 (InfiniBand over UDP). The payload heuristics that misread
    arbitrary SEND payloads are turned off, as in test/wire.
  - the ICRC of every RoCEv2 frame verifies with the IBTA A17.3.3 routine
    of test/wire/crosscheck_scapy.py (icrc_ref, itself checked against
    scapy there), and scapy's own (scapy.contrib.roce, IPv4 only) agrees on
    the first SCAPY_PER_KIND frames of each opcode and direction: scapy
    rebuilds a frame in ~3 ms, too slow for the 10^5 frames of a suite;
  - the frames it counts: RoCEv2 frames in each direction (the pcapng
    enhanced packet block's direction flag), by BTH opcode, and the other
    frames (ARP, RAW_PACKET QPs' frames, the kernel's) in each direction:
    those are only decoded by tshark, as any frame is.

  - optionally, the L2/L3 fields every RoCEv2 frame must carry: 802.1Q
    VID and PCP (or untagged), IP version, DSCP and ECN (check()'s
    expect; the script's --expect vid=77,pcp=5,ip=6,dscp=26,ecn=0).

As a script: check_capture.py [--expect K=V,...] FILE... prints a summary
per file and exits 1 on any problem (77 when scapy or tshark is missing).
run_pair.py imports check() and adds its own expectations on the counts.
"""

import collections
import os
import shutil
import struct
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                '..', 'wire'))
import crosscheck_scapy as xs  # noqa: E402 (exits 77 without scapy)
from crosscheck_tshark import PAYLOAD_HEURISTICS, PREFS, EXPERT_WARN  # noqa

ROCE_PORT = 4791
SKIP = 77
SCAPY_PER_KIND = 64

# pcapng (draft-ietf-opsawg-pcapng): block types and the EPB flags option.
SHB, IDB, EPB = 0x0a0d0d0a, 0x00000001, 0x00000006
OPT_EPB_FLAGS = 2
DIR_NAMES = {1: 'in', 2: 'out'}


def read_pcapng(path):
    """[(frame bytes, 'in' | 'out' | '?')], in file order. Little-endian
    files only (what rte_pcapng writes on x86)."""
    with open(path, 'rb') as f:
        data = f.read()
    frames, off = [], 0
    while off + 12 <= len(data):
        btype, blen = struct.unpack_from('<II', data, off)
        if blen < 12 or off + blen > len(data):
            raise ValueError('%s: truncated block at %d' % (path, off))
        if btype == SHB and struct.unpack_from('<I', data, off + 8)[0] != \
                0x1a2b3c4d:
            raise ValueError('%s: not a little-endian pcapng' % path)
        if btype == EPB:
            caplen = struct.unpack_from('<I', data, off + 20)[0]
            frame = data[off + 28:off + 28 + caplen]
            frames.append((frame, epb_direction(data, off + 28 +
                                                ((caplen + 3) & ~3),
                                                off + blen - 4)))
        off += blen
    return frames


def epb_direction(data, opt, end):
    while opt + 4 <= end:
        code, olen = struct.unpack_from('<HH', data, opt)
        if code == 0:
            break
        if code == OPT_EPB_FLAGS and olen == 4:
            flags = struct.unpack_from('<I', data, opt + 4)[0]
            return DIR_NAMES.get(flags & 3, '?')
        opt += 4 + ((olen + 3) & ~3)
    return '?'


def l3_offset(frame):
    """(offset of the IP header, IP version) or None: Ethernet, optional
    802.1Q."""
    off, etype = 14, struct.unpack_from('!H', frame, 12)[0]
    if etype == 0x8100:
        off, etype = 18, struct.unpack_from('!H', frame, 16)[0]
    return {0x0800: (off, 4), 0x86dd: (off, 6)}.get(etype)


def roce_opcode(frame):
    """(BTH opcode, l3 offset, IP version) of a RoCEv2 frame, else None."""
    if len(frame) < 14:
        return None
    l3 = l3_offset(frame)
    if l3 is None:
        return None
    off, ver = l3
    if ver == 4:
        if frame[off + 9] != 17:
            return None
        udp = off + (frame[off] & 0xf) * 4
    else:
        if frame[off + 6] != 17:
            return None
        udp = off + 40
    if len(frame) < udp + 8 + 12 or \
            struct.unpack_from('!H', frame, udp + 2)[0] != ROCE_PORT:
        return None
    return frame[udp + 8], off, ver


def header_fields(frame, off, ver):
    """{'vid', 'pcp' (None untagged), 'ip', 'dscp', 'ecn'} of a RoCEv2
    frame whose IP header is at off."""
    f = {'vid': None, 'pcp': None, 'ip': ver}
    if off == 18:
        tci = struct.unpack_from('!H', frame, 14)[0]
        f['vid'], f['pcp'] = tci & 0xfff, tci >> 13
    tos = frame[off + 1] if ver == 4 else \
        (struct.unpack_from('!I', frame, off)[0] >> 20) & 0xff
    f['dscp'], f['ecn'] = tos >> 2, tos & 3
    return f


def header_problems(frame, off, ver, expect):
    """[str]: the fields of expect (as header_fields names them) that the
    frame does not have."""
    got = header_fields(frame, off, ver)
    return ['%s %s, expected %s' % (k, got[k], v)
            for k, v in sorted(expect.items()) if got[k] != v]


def icrc_ok(frame, off, ver, with_scapy):
    """Whether the frame's ICRC is right (and scapy says so too)."""
    if frame[-4:] != xs.icrc_ref(frame, off):
        return False
    return not (with_scapy and ver == 4) or frame[-4:] == xs.scapy_icrc(frame)


def tshark_problems(path):
    """[(frame number, problem)] from one tshark pass over the file."""
    cmd = ['tshark', '-r', path, '-n', '-T', 'fields', '-E', 'occurrence=a',
           '-E', 'separator=\t', '-E', 'aggregator=,',
           '-e', 'frame.number', '-e', 'frame.protocols',
           '-e', 'udp.dstport', '-e', '_ws.malformed',
           '-e', '_ws.expert.severity', '-e', '_ws.expert.message']
    for h in PAYLOAD_HEURISTICS:
        cmd += ['--disable-heuristic', h]
    for p in PREFS:
        cmd += ['-o', p]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if out.returncode != 0:
        return [(0, 'tshark failed: %s' % out.stderr.strip()[-300:])]
    probs = []
    for line in out.stdout.splitlines():
        col = (line.split('\t') + [''] * 6)[:6]
        num, protos, dport, malformed, sev, msg = col
        if malformed:
            probs.append((int(num), 'malformed (%s)' % protos))
        sevs = [int(s, 0) for s in sev.split(',') if s]
        if any(s >= EXPERT_WARN for s in sevs):
            probs.append((int(num), 'expert: %s' % msg))
        if str(ROCE_PORT) in dport.split(',') and \
                'infiniband' not in protos.split(':'):
            probs.append((int(num), 'not decoded as RoCEv2: %s' % protos))
    return probs


def check(path, expect=None):
    """Summary of one capture: {'frames', 'roce': {'in', 'out', '?'},
    'other': {'in', 'out', '?'}, 'opcodes': Counter, 'problems': [str]}.
    expect: header fields every RoCEv2 frame must have (header_fields(),
    e.g. {'vid': 77, 'pcp': 5, 'ip': 6, 'dscp': 26, 'ecn': 0})."""
    res = {'frames': 0, 'roce': collections.Counter(),
           'other': collections.Counter(),
           'opcodes': collections.Counter(), 'problems': [], 'scapy': 0}
    kinds = collections.Counter()
    try:
        frames = read_pcapng(path)
    except (OSError, ValueError) as e:
        res['problems'].append(str(e))
        return res
    res['frames'] = len(frames)
    bad_icrc = bad_hdr = 0
    for i, (frame, direction) in enumerate(frames, 1):
        r = roce_opcode(frame)
        if r is None:
            res['other'][direction] += 1
            continue
        hp = header_problems(frame, r[1], r[2], expect or {})
        if hp:
            bad_hdr += 1
            if bad_hdr <= 5:
                res['problems'].append('frame %d (%s): %s' %
                                       (i, direction, ', '.join(hp)))
        res['roce'][direction] += 1
        res['opcodes'][r[0]] += 1
        kinds[(r[0], direction)] += 1
        with_scapy = kinds[(r[0], direction)] <= SCAPY_PER_KIND
        res['scapy'] += with_scapy and r[2] == 4
        if not icrc_ok(frame, r[1], r[2], with_scapy):
            bad_icrc += 1
            if bad_icrc <= 5:
                res['problems'].append('frame %d (%s, opcode 0x%02x): bad '
                                       'ICRC' % (i, direction, r[0]))
    if bad_hdr > 5:
        res['problems'].append('%d frames with other headers than '
                               'expected' % bad_hdr)
    if bad_icrc > 5:
        res['problems'].append('%d frames with a bad ICRC' % bad_icrc)
    tp = tshark_problems(path)
    res['problems'] += ['frame %d: %s' % p for p in tp[:5]]
    if len(tp) > 5:
        res['problems'].append('%d tshark problems in all' % len(tp))
    return res


def summary(path, res):
    ops = ' '.join('0x%02x:%d' % kv for kv in sorted(res['opcodes'].items()))
    return '%s: %d frames, RoCEv2 out %d in %d (%s), ICRC checked (%d by ' \
        'scapy), other out %d in %d' % (
            os.path.basename(path), res['frames'], res['roce']['out'],
            res['roce']['in'], ops, res['scapy'], res['other']['out'],
            res['other']['in'])


def parse_expect(text):
    """'vid=77,pcp=5,ip=6' -> {'vid': 77, ...}; 'vid=none': untagged."""
    out = {}
    for kv in text.split(','):
        k, v = kv.split('=', 1)
        if k not in ('vid', 'pcp', 'ip', 'dscp', 'ecn'):
            raise SystemExit('--expect: unknown field %s' % k)
        out[k] = None if v == 'none' else int(v, 0)
    return out


def tools_present():
    return shutil.which('tshark') is not None


def main():
    if not tools_present():
        print('tshark is not installed: skipping')
        return SKIP
    args, expect = sys.argv[1:], None
    if len(args) >= 2 and args[0] == '--expect':
        expect = parse_expect(args[1])
        args = args[2:]
    bad = 0
    for path in args:
        res = check(path, expect)
        print(summary(path, res))
        for p in res['problems']:
            print('  ' + p)
        bad += bool(res['problems'])
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
