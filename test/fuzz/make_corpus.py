#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The uroce authors
"""Regenerate the parser fuzzer's seed corpus (test/fuzz/corpus/).

Builds frames of every opcode with uroce-wire-tool (IPv4, IPv6, 802.1Q) and
keeps the smallest frame of each opcode and variant, one file each, named
<variant>-<opcode>. Usage: make_corpus.py PATH/TO/uroce-wire-tool
"""
import os
import struct
import subprocess
import sys
import tempfile

VARIANTS = {"v4": [], "v6": ["--ipv6"], "vlan": ["--vlan"]}


def pcap_frames(path):
    """Yield the frames of a classic pcap file."""
    with open(path, "rb") as f:
        data = f.read()
    off = 24
    while off + 16 <= len(data):
        incl = struct.unpack_from("<I", data, off + 8)[0]
        yield data[off + 16:off + 16 + incl]
        off += 16 + incl


def bth_opcode(frame):
    """Opcode byte: after Ethernet [+ tag], the IP header and UDP."""
    l3 = 18 if frame[12:14] == b"\x81\x00" else 14
    ip_len = (frame[l3] & 0xF) * 4 if frame[l3] >> 4 == 4 else 40
    return frame[l3 + ip_len + 8]


def main():
    tool = sys.argv[1]
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")
    os.makedirs(out, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        for seed, (name, flags) in enumerate(VARIANTS.items(), 1):
            pcap = os.path.join(tmp, name + ".pcap")
            subprocess.run([tool, "build-all", pcap, os.path.join(tmp, "x.json"),
                            "--seed", str(seed)] + flags, check=True,
                           stdout=subprocess.DEVNULL)
            smallest = {}
            for frame in pcap_frames(pcap):
                op = bth_opcode(frame)
                if op not in smallest or len(frame) < len(smallest[op]):
                    smallest[op] = frame
            for op, frame in smallest.items():
                with open(os.path.join(out, f"{name}-{op:02x}"), "wb") as f:
                    f.write(frame)
    print(f"wrote {len(os.listdir(out))} seeds to {out}")


if __name__ == "__main__":
    main()
