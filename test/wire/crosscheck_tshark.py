#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The uroce authors
"""Cross-check uroce's RoCEv2 frames against tshark's dissector.

`uroce-wire-tool build-all` writes frames for every opcode (IPv4 and IPv6,
each with and without 802.1Q) and a JSON of the values it used. tshark decodes
the pcap with the heuristic dissectors that could claim a RoCE payload turned
off. Each frame must be decoded as RoCEv2 (UDP 4791 -> InfiniBand, "RRoCE"),
without a malformed-packet mark or an expert item of severity warning or
error, and the fields tshark exposes must equal the JSON: Ethernet, VLAN, IP
(with tshark checking the IPv4 header checksum), UDP, the BTH, RETH, AETH,
AtomicETH, AtomicAckETH, ImmDt, IETH, DETH, payload plus pad, and the ICRC.

What tshark 4.0 does not dissect:
- CNP: tshark calls opcode 0x80 "CNP", but IBTA Annex A17.9.3 (and scapy,
  and the NICs) use 0x81. tshark shows 0x81 as "Unknown (129)": the BTH is
  decoded, the 16 reserved bytes and the ICRC as "vendor specific data";
  nothing is marked malformed, so 0x81 gets the full check below.
- XRC (0xa0-0xb7): tshark knows the opcode names but not the XRCETH, so it
  shows everything after the BTH (ICRC included) as vendor specific data.
For these, the vendor data must equal the frame's bytes after the BTH.
"""

import argparse
import collections
import ipaddress
import json
import os
import struct
import subprocess
import sys
import tempfile

SEED = 11

# Heuristic sub-dissectors of "infiniband.payload" (`tshark -G
# heuristic-decodes`), by the short names --disable-heuristic takes. Random
# payload bytes can look like one of these protocols (RPC-over-RDMA claims some
# and marks them malformed); they are not what is being checked. UDP
# heuristics never run: the 4791 port dissector is tried first.
PAYLOAD_HEURISTICS = [
    "drbd_rdma", "eth_over_ib", "fc_infiniband", "iser_infiniband", "lnet_ib",
    "mellanox_eoib", "nvme_rdma", "rpcrdma_infiniband", "sdp_infiniband",
    "smb_direct_infiniband", "smcr_infiniband",
]

PREFS = [
    "ip.check_checksum:TRUE",
    # RoCEv2 senders (uroce like the NICs) put UDP checksum 0 over IPv6 too;
    # RFC 8200 wants a checksum there and tshark reports 0 as an error unless
    # told, as here, to accept zero checksums (RFC 6935/6936 allow them).
    "udp.ignore_ipv6_zero_checksum:TRUE",
]

FIELDS = [
    "frame.protocols", "_ws.malformed", "_ws.expert.severity", "_ws.expert.message",
    "eth.dst", "eth.src", "vlan.priority", "vlan.dei", "vlan.id",
    "ip.src", "ip.dst", "ip.dsfield", "ip.ttl", "ip.checksum.status",
    "ipv6.src", "ipv6.dst", "ipv6.tclass", "ipv6.flow", "ipv6.hlim",
    "udp.srcport", "udp.dstport", "udp.length",
    "infiniband.bth.opcode", "infiniband.bth.se", "infiniband.bth.m",
    "infiniband.bth.padcnt", "infiniband.bth.tver", "infiniband.bth.p_key",
    "infiniband.reserved", "infiniband.bth.destqp", "infiniband.bth.a",
    "infiniband.bth.psn",
    "infiniband.reth.va", "infiniband.reth.r_key", "infiniband.reth.dmalen",
    "infiniband.aeth.syndrome", "infiniband.aeth.msn",
    "infiniband.atomiceth.swapdt", "infiniband.atomiceth.cmpdt",
    "infiniband.atomicacketh.origremdt", "infiniband.immdt", "infiniband.ieth",
    "infiniband.deth.q_key", "infiniband.deth.srcqp",
    "infiniband.vendor", "infiniband.invariant.crc", "data.data",
]

EXPERT_WARN = 0x00600000  # PI_WARN; PI_ERROR is 0x00800000

# JSON -> tshark, per extension header. tshark puts the AtomicETH's VA and
# R_Key in the RETH fields. ImmDt and IETH are shown as bytes.
EXT_FIELDS = {
    "reth": {"va": "infiniband.reth.va", "rkey": "infiniband.reth.r_key",
             "len": "infiniband.reth.dmalen"},
    "aeth": {"syndrome": "infiniband.aeth.syndrome", "msn": "infiniband.aeth.msn"},
    "atomiceth": {"va": "infiniband.reth.va", "rkey": "infiniband.reth.r_key",
                  "swap_add": "infiniband.atomiceth.swapdt",
                  "cmp": "infiniband.atomiceth.cmpdt"},
    "atomicacketh": {"orig": "infiniband.atomicacketh.origremdt"},
    "immdt": {"imm": "infiniband.immdt"},
    "ieth": {"rkey": "infiniband.ieth"},
    "deth": {"qkey": "infiniband.deth.q_key", "sqpn": "infiniband.deth.srcqp"},
}

BTH_FIELDS = {"opcode": "opcode", "se": "se", "mig": "m", "pad": "padcnt",
              "tver": "tver", "pkey": "p_key", "dqpn": "destqp", "ackreq": "a",
              "psn": "psn"}


def tshark_opaque(opcode):
    """Opcodes whose headers after the BTH tshark 4.0 shows as vendor data."""
    return opcode == 0x81 or 0xa0 <= opcode <= 0xb7


def diff(what, expected, got):
    return [] if expected == got else [f"{what}: expected {expected!r}, got {got!r}"]


# Fields tshark gives as bytes (hex without 0x), read as big-endian numbers.
BYTES_FIELDS = {"infiniband.reserved", "infiniband.immdt", "infiniband.ieth"}


def first(layers, field):
    vals = layers.get(field)
    return vals[0] if vals else None


def num(layers, field):
    """The first value of a field as an int (None when absent)."""
    s = first(layers, field)
    if s is None:
        return None
    return int(s, 16) if field in BYTES_FIELDS else int(s, 0)


# ---------------------------------------------------------------------------
# Running the tool and tshark.

def build(tool, tmp, flags):
    """Runs build-all; returns (pcap path, frames as bytes, JSON per frame)."""
    pcap, js = os.path.join(tmp, "uroce.pcap"), os.path.join(tmp, "uroce.json")
    subprocess.run([tool, "build-all", pcap, js, "--seed", str(SEED), *flags],
                   check=True)
    with open(js) as f:
        descs = json.load(f)["frames"]
    return pcap, read_pcap(pcap), descs


def read_pcap(path):
    with open(path, "rb") as f:
        data = f.read()
    frames, off = [], 24
    while off < len(data):
        incl = struct.unpack("<I", data[off + 8:off + 12])[0]
        frames.append(data[off + 16:off + 16 + incl])
        off += 16 + incl
    return frames


def run_tshark(tshark, pcap):
    """tshark's fields of every frame: a list of {field: [values]}."""
    cmd = [tshark, "-r", pcap, "-T", "json"]
    for h in PAYLOAD_HEURISTICS:
        cmd += ["--disable-heuristic", h]
    for p in PREFS:
        cmd += ["-o", p]
    for f in FIELDS:
        cmd += ["-e", f]
    res = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if res.returncode != 0 or "can't disable" in res.stderr:
        raise RuntimeError(f"tshark failed: {res.stderr.strip()}")
    return [pkt["_source"]["layers"] for pkt in json.loads(res.stdout)]


# ---------------------------------------------------------------------------
# Checks of one frame.

def check_decoded(t):
    """Decoded as RoCEv2, not malformed, no warning or error."""
    protos = first(t, "frame.protocols") or ""
    p = [] if ":udp:infiniband" in protos else [f"not decoded as RoCEv2: {protos}"]
    if "_ws.malformed" in t or "malformed" in protos:
        p.append("malformed")
    for sev, msg in zip(t.get("_ws.expert.severity", []), t.get("_ws.expert.message", [])):
        if int(sev) >= EXPERT_WARN:
            p.append(f"expert: {msg}")
    return p


def check_l2(t, js):
    p = diff("dmac", js["dmac"], first(t, "eth.dst"))
    p += diff("smac", js["smac"], first(t, "eth.src"))
    if not js["vlan"]:
        return p + diff("vlan", None, first(t, "vlan.id"))
    tci = [num(t, "vlan." + f) for f in ("priority", "dei", "id")]
    return p + diff("vlan_tci", js["vlan_tci"], None if None in tci else
                    tci[0] << 13 | tci[1] << 12 | tci[2])


def check_l3(t, js):
    ip = "ip" if js["ip_ver"] == 4 else "ipv6"
    addr = [ipaddress.ip_address(a) if a else None
            for a in (first(t, ip + ".src"), first(t, ip + ".dst"))]
    p = diff("src", ipaddress.ip_address(js["src"]), addr[0])
    p += diff("dst", ipaddress.ip_address(js["dst"]), addr[1])
    if ip == "ip":
        p += diff("tclass", js["tclass"], num(t, "ip.dsfield"))
        p += diff("hop_limit", js["hop_limit"], num(t, "ip.ttl"))
        return p + diff("ipv4 checksum status (1: good)", "1", first(t, "ip.checksum.status"))
    p += diff("tclass", js["tclass"], num(t, "ipv6.tclass"))
    p += diff("flow_label", js["flow_label"], num(t, "ipv6.flow"))
    return p + diff("hop_limit", js["hop_limit"], num(t, "ipv6.hlim"))


def check_udp(t, js, l4_off):
    p = diff("udp_sport", js["udp_sport"], num(t, "udp.srcport"))
    p += diff("udp dport", 4791, num(t, "udp.dstport"))
    return p + diff("udp length", js["frame_len"] - l4_off, num(t, "udp.length"))


def check_bth(t, js):
    p = [f"bth {k}: expected {js[k]}, got {first(t, 'infiniband.bth.' + f)}"
         for k, f in BTH_FIELDS.items()
         if num(t, "infiniband.bth." + f) != js[k]]
    # The first "Reserved" item is BTH byte 4: FECN, BECN, 6 reserved bits.
    resv8a = js["fecn"] << 7 | js["becn"] << 6
    return p + diff("bth fecn/becn byte", resv8a, num(t, "infiniband.reserved"))


def check_ext(t, js):
    p = []
    for hdr, fields in js["ext"].items():
        for name, value in fields.items():
            field = EXT_FIELDS[hdr][name]
            p += diff(f"{hdr}.{name} ({field})", value, num(t, field))
    return p


def check_payload(t, js):
    """tshark shows the payload and the pad as one data item, and the ICRC
    as read big-endian."""
    data = bytes.fromhex(js["payload"]) + b"\0" * js["pad"]
    p = diff("payload + pad", data.hex() or None, first(t, "data.data"))
    icrc = struct.unpack(">I", struct.pack("<I", js["icrc"]))[0]
    return p + diff("icrc", icrc, num(t, "infiniband.invariant.crc"))


def check_vendor(t, js, frame, bth_end):
    """The longest vendor-data item must be the whole rest of the frame."""
    items = t.get("infiniband.vendor", [])
    got = max(items, key=len) if items else None
    return diff("vendor data (all after the BTH)", frame[bth_end:js["frame_len"]].hex(), got)


def check_frame(t, js, frame):
    l3_off = 14 + 4 * js["vlan"]
    l4_off = l3_off + (20 if js["ip_ver"] == 4 else 40)
    p = check_decoded(t) + check_l2(t, js) + check_l3(t, js) + check_udp(t, js, l4_off)
    p += check_bth(t, js)
    if tshark_opaque(js["opcode"]):
        return p + check_vendor(t, js, frame, l4_off + 8 + 12)
    p += diff("vendor data", None, first(t, "infiniband.vendor"))
    return p + check_ext(t, js) + check_payload(t, js)


# ---------------------------------------------------------------------------

def check_variant(tool, tshark, tmp, flags, counts, failures):
    pcap, frames, descs = build(tool, tmp, flags)
    decoded = run_tshark(tshark, pcap)
    if not len(frames) == len(descs) == len(decoded):
        failures.append(f"{flags}: {len(frames)} frames, {len(descs)} in JSON, "
                        f"{len(decoded)} decoded by tshark")
        return
    for t, js, frame in zip(decoded, descs, frames):
        problems = check_frame(t, js, frame)
        entry = counts[js["opcode"], js["name"]]
        entry[0] += 1
        if problems:
            entry[1] += 1
            failures.append(f"{' '.join(flags) or 'ipv4'} frame {js['index']} "
                            f"opcode 0x{js['opcode']:02x}: " + "; ".join(problems))


def print_summary(counts, failures):
    print(f"opcode  {'name':<36}frames  mismatched  tshark view")
    for (op, name), (n, bad) in sorted(counts.items()):
        view = "vendor data" if tshark_opaque(op) else "dissected"
        print(f"0x{op:02x}    {name:<36}{n:>6}  {bad:>10}  {view}")
    for f in failures[:40]:
        print("FAIL", f)
    if len(failures) > 40:
        print(f"... and {len(failures) - 40} more failures")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tool", required=True, help="path of uroce-wire-tool")
    ap.add_argument("--tshark", default="tshark")
    args = ap.parse_args()
    counts, failures = collections.defaultdict(lambda: [0, 0]), []
    with tempfile.TemporaryDirectory(prefix="uroce-tshark-") as tmp:
        for flags in ([], ["--vlan"], ["--ipv6"], ["--ipv6", "--vlan"],
                      ["--ect"], ["--ect", "--ipv6", "--vlan"]):
            check_variant(args.tool, args.tshark, tmp, flags, counts, failures)
    print_summary(counts, failures)
    return 1 if failures or not counts else 0


if __name__ == "__main__":
    sys.exit(main())
