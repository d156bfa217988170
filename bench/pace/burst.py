#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The uroce authors
"""The largest burst of each paced QP in a pcapng capture (run.sh step 2).

    burst.py CAPTURE RATE_KBPS MAX_BURST_SZ OUT_JSON
    burst.py --selftest      the analysis on a synthetic capture (unit test)

Reads the capture uroce's port wrote ([port] pcap), keeps the RoCEv2 frames
the client sent (source MAC 02:00:00:00:77:02), groups them by destination
QP (BTH), and for each QP computes the smallest token-bucket depth b for
which its frames conform to the rate: b = max over i <= j of
(bytes of frames i..j) - rate x (t_j - t_i). That is the largest burst the
QP put on the wire beyond its rate: a pacer with bucket max_burst_sz
at that rate can never exceed max_burst_sz, so b <= max_burst_sz must hold.
Frame bytes are the captured frame lengths (what the pacer charges).
Timestamps are the port's, taken when the engine hands a tx burst to the
ethdev (after the pacer let the frames go; a frame that waited behind a
full tx queue is stamped when it is handed over again).
Exit status 1 when a QP's burst exceeds max_burst_sz.
"""
import json
import struct
import sys

CLIENT_MAC = bytes.fromhex("020000007702")
ROCE_PORT = 4791


def blocks(data):
    """(type, body) of each pcapng block, in the section's byte order."""
    off, endian = 0, "<"
    while off + 12 <= len(data):
        btype = struct.unpack_from(endian + "I", data, off)[0]
        if btype == 0x0A0D0D0A:
            magic = data[off + 8:off + 12]
            endian = "<" if magic == b"\x4d\x3c\x2b\x1a" else ">"
        blen = struct.unpack_from(endian + "I", data, off + 4)[0]
        if blen < 12 or off + blen > len(data):
            break
        yield btype, data[off + 8:off + blen - 4], endian
        off += blen


def tsresol(body, endian):
    """Seconds per timestamp unit from an IDB's if_tsresol (default us)."""
    off = 8
    while off + 4 <= len(body):
        code, olen = struct.unpack_from(endian + "HH", body, off)
        if code == 0:
            break
        if code == 9 and olen >= 1:
            v = body[off + 4]
            return 2.0 ** -(v & 0x7F) if v & 0x80 else 10.0 ** -v
        off += 4 + (olen + 3) // 4 * 4
    return 1e-6


def frames(path):
    """(seconds, length, dest QPN) of the client's RoCEv2 frames."""
    with open(path, "rb") as f:
        data = f.read()
    res = []
    for btype, body, endian in blocks(data):
        if btype == 1:
            res.append(tsresol(body, endian))
            continue
        if btype != 6:
            continue
        ifid, hi, lo, cap, orig = struct.unpack_from(endian + "IIIII", body)
        pkt = body[20:20 + cap]
        qpn = roce_qpn(pkt)
        if qpn is None:
            continue
        ts = ((hi << 32) | lo) * res[ifid]
        yield ts, orig, qpn


def roce_qpn(pkt):
    if len(pkt) < 14 + 20 + 8 + 12 or pkt[6:12] != CLIENT_MAC:
        return None
    off, etype = 14, struct.unpack_from(">H", pkt, 12)[0]
    if etype == 0x8100:
        off, etype = 18, struct.unpack_from(">H", pkt, 16)[0]
    if etype == 0x0800:
        if pkt[off + 9] != 17:
            return None
        off += (pkt[off] & 0x0F) * 4
    elif etype == 0x86DD:
        if pkt[off + 6] != 17:
            return None
        off += 40
    else:
        return None
    if struct.unpack_from(">H", pkt, off + 2)[0] != ROCE_PORT:
        return None
    bth = off + 8
    return int.from_bytes(pkt[bth + 5:bth + 8], "big")


def max_burst(seq, rate_Bps):
    """max over i <= j of sum(len i..j) - rate x (t_j - t_i)."""
    best_start = None
    cum = 0.0
    worst = 0.0
    for t, n in seq:
        start = rate_Bps * t - cum        # frame i starting here
        best_start = start if best_start is None else max(best_start, start)
        cum += n
        worst = max(worst, cum - rate_Bps * t + best_start)
    return worst


def synth_frame(qpn, length):
    """An Ethernet/IPv4/UDP 4791/BTH frame of length bytes to qpn."""
    eth = bytes(6) + CLIENT_MAC + b"\x08\x00"
    ip = bytes([0x45, 0, 0, 0, 0, 0, 0, 0, 64, 17]) + bytes(10)
    udp = struct.pack(">HHHH", 0xC000, ROCE_PORT, 0, 0)
    bth = bytes([0x0A, 0, 0xFF, 0xFF, 0]) + qpn.to_bytes(3, "big") + bytes(4)
    pkt = eth + ip + udp + bth
    return pkt + bytes(length - len(pkt))


def synth_pcapng(path, frames):
    """frames: (ns, length, qpn); one interface with nanosecond stamps."""
    def block(btype, body):
        body += bytes(-len(body) % 4)
        n = len(body) + 12
        return struct.pack("<II", btype, n) + body + struct.pack("<I", n)
    out = block(0x0A0D0D0A, struct.pack("<IHHq", 0x1A2B3C4D, 1, 0, -1))
    out += block(1, struct.pack("<HHI", 1, 0, 65535) +
                 struct.pack("<HHB3x", 9, 1, 9) + struct.pack("<HH", 0, 0))
    for ns, length, qpn in frames:
        pkt = synth_frame(qpn, length)
        out += block(6, struct.pack("<IIIII", 0, ns >> 32, ns & 0xFFFFFFFF,
                                    len(pkt), len(pkt)) + pkt)
    with open(path, "wb") as f:
        f.write(out)


def selftest():
    """Known timing: QP 1 exactly on its rate (burst: one frame); QP 2 the
    same with 5 frames at one instant halfway (5 frames) and its last 20
    frames at one instant after a pause of 100 frame times (20 frames: a
    pause earns no more than the frames sent at once)."""
    import tempfile
    rate_kbps, length = 8000, 1000          # 1 MB/s: a frame per ms
    gap = length * 8 * 10**6 // rate_kbps   # ns per frame at the rate
    fr = [(i * gap, length, 1) for i in range(200)]
    t2 = [i * gap for i in range(100)] + [100 * gap] * 5 + \
        [(105 + i) * gap for i in range(50)] + [(255 + 100) * gap] * 20
    fr += [(t, length, 2) for t in t2]
    fr.sort()
    with tempfile.TemporaryDirectory() as d:
        synth_pcapng(d + "/s.pcapng", fr)
        per = {}
        for ts, n, qpn in frames(d + "/s.pcapng"):
            per.setdefault(qpn, []).append((ts, n))
    got = {q: round(max_burst(sorted(seq), rate_kbps * 125))
           for q, seq in per.items()}
    want = {1: length, 2: 20 * length}
    ok = got == want and len(per[1]) == 200 and len(per[2]) == 175
    print(f"burst.py selftest: got {got}, want {want}: "
          f"{'ok' if ok else 'FAILED'}")
    return 0 if ok else 1


def main():
    if sys.argv[1:] == ["--selftest"]:
        return selftest()
    if len(sys.argv) != 5:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    path, rate_kbps, limit, out = sys.argv[1], int(sys.argv[2]), \
        int(sys.argv[3]), sys.argv[4]
    rate_Bps = rate_kbps * 1000 / 8
    per_qp = {}
    for ts, n, qpn in frames(path):
        per_qp.setdefault(qpn, []).append((ts, n))
    rows = []
    for qpn, seq in sorted(per_qp.items()):
        seq.sort()
        span = seq[-1][0] - seq[0][0]
        rows.append({"qpn": qpn, "frames": len(seq),
                     "bytes": sum(n for _, n in seq),
                     "rate_bps": (sum(n for _, n in seq[1:]) * 8 / span)
                     if span > 0 else 0,
                     "max_burst_bytes": round(max_burst(seq, rate_Bps))})
    worst = max((r["max_burst_bytes"] for r in rows), default=0)
    ok = bool(rows) and worst <= limit
    res = {"rate_kbps": rate_kbps, "max_burst_sz": limit,
           "largest_burst_bytes": worst, "qps": rows,
           "verdict": "ok" if ok else "MISSED"}
    with open(out, "w") as f:
        json.dump(res, f, indent=2)
    print(f"{'QPN':>8} {'frames':>8} {'Mbit/s':>10} {'largest burst B':>16}")
    for r in rows:
        print(f"{r['qpn']:>8x} {r['frames']:>8} {r['rate_bps'] / 1e6:>10.3f}"
              f" {r['max_burst_bytes']:>16}")
    print(f"largest burst {worst} B, max_burst_sz {limit} B: "
          f"{res['verdict']}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
