#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The uroce authors
"""Cross-check uroce's RoCEv2 wire format against scapy and a python ICRC.

u2s  uroce -> scapy: frames from `uroce-wire-tool build-all` (IPv4, with and
     without 802.1Q) are dissected by scapy.contrib.roce plus the extension
     header layers defined here from the IBTA layouts; the ICRC scapy computes
     and every field it decodes must equal what the tool's JSON says it used.
s2u  scapy -> uroce: for every opcode of IBTA Table 38 (plus CNP), written
     down here independently of uroce's table, scapy builds frames with
     random fields and its own ICRC (IPv4; IPv6 frames get the python ICRC);
     `uroce-wire-tool parse` must accept each one and report the same fields.
neg  one-byte corruptions and every truncation of scapy's frames, and frames
     of a wrong transport length (with a good ICRC), must be dropped with a
     named verdict (a corrupt payload: bad_icrc) and must not crash the
     parser; corrupting a field the ICRC masks must not drop the frame.
v6   scapy cannot compute an IPv6 ICRC, so icrc_ref() (IBTA A17.3.3, checked
     against scapy on every IPv4 frame of u2s) checks uroce's IPv6 frames,
     whose fields scapy decodes as in u2s.

Exits 1 on any mismatch and prints a summary per opcode.
"""

import argparse
import collections
import ipaddress
import json
import os
import random
import struct
import subprocess
import sys
import tempfile
import zlib

try:
    from scapy.compat import raw
    from scapy.fields import BitField
    from scapy.layers.inet import IP, UDP
    from scapy.layers.inet6 import IPv6
    from scapy.layers.l2 import Dot1Q, Ether
    from scapy.packet import Packet, Raw
    from scapy.utils import checksum, rdpcap
    from scapy.contrib.roce import AETH, BTH, CNPPadding
except ImportError as e:
    print(f"scapy is not available ({e}): skipping", file=sys.stderr)
    sys.exit(77)  # meson: skipped

ROCE_PORT = 4791
BTH_LEN = 12
ICRC_LEN = 4
SEED = 7


# ---------------------------------------------------------------------------
# Extension headers (IBTA 9.3). Fields named "resv..." are reserved (zero);
# the other names are the keys uroce-wire-tool uses in its JSON.

def ext_layer(name, fields):
    """A scapy layer of big-endian unsigned fields given as (name, bits)."""
    return type(name, (Packet,), {
        "name": name,
        "fields_desc": [BitField(n, 0, bits) for n, bits in fields],
    })


RETH = ext_layer("RETH", [("va", 64), ("rkey", 32), ("len", 32)])
AtomicETH = ext_layer("AtomicETH", [("va", 64), ("rkey", 32),
                                    ("swap_add", 64), ("cmp", 64)])
AtomicAckETH = ext_layer("AtomicAckETH", [("orig", 64)])
ImmDt = ext_layer("ImmDt", [("imm", 32)])
IETH = ext_layer("IETH", [("rkey", 32)])
DETH = ext_layer("DETH", [("qkey", 32), ("resv8", 8), ("sqpn", 24)])
XRCETH = ext_layer("XRCETH", [("resv8", 8), ("srqn", 24)])

EXT_LAYERS = {
    "xrceth": XRCETH, "deth": DETH, "reth": RETH, "atomiceth": AtomicETH,
    "aeth": AETH, "atomicacketh": AtomicAckETH, "immdt": ImmDt, "ieth": IETH,
    "cnp": CNPPadding,  # 16 reserved bytes (Annex A17.9.3)
}


def is_reserved(field):
    return field.name.startswith(("resv", "reserved"))


def ext_fields(key):
    """The named (non-reserved) fields of an extension header."""
    return [f for f in EXT_LAYERS[key].fields_desc if not is_reserved(f)]


def ext_len(key):
    return len(raw(EXT_LAYERS[key]()))


def field_bits(field):
    return getattr(field, "size", None) or int(field.sz * 8)


# ---------------------------------------------------------------------------
# The opcodes (IBTA Table 38, Annex A17.9.3), independent of uroce's table.
# op: (name, extension headers after the BTH, may carry payload)

BASE_OPS = {
    0x00: ("SEND_FIRST", [], True),
    0x01: ("SEND_MIDDLE", [], True),
    0x02: ("SEND_LAST", [], True),
    0x03: ("SEND_LAST_IMM", ["immdt"], True),
    0x04: ("SEND_ONLY", [], True),
    0x05: ("SEND_ONLY_IMM", ["immdt"], True),
    0x06: ("WRITE_FIRST", ["reth"], True),
    0x07: ("WRITE_MIDDLE", [], True),
    0x08: ("WRITE_LAST", [], True),
    0x09: ("WRITE_LAST_IMM", ["immdt"], True),
    0x0a: ("WRITE_ONLY", ["reth"], True),
    0x0b: ("WRITE_ONLY_IMM", ["reth", "immdt"], True),
    0x0c: ("READ_REQ", ["reth"], False),
    0x0d: ("READ_RESP_FIRST", ["aeth"], True),
    0x0e: ("READ_RESP_MIDDLE", [], True),
    0x0f: ("READ_RESP_LAST", ["aeth"], True),
    0x10: ("READ_RESP_ONLY", ["aeth"], True),
    0x11: ("ACK", ["aeth"], False),
    0x12: ("ATOMIC_ACK", ["aeth", "atomicacketh"], False),
    0x13: ("CMP_SWAP", ["atomiceth"], False),
    0x14: ("FETCH_ADD", ["atomiceth"], False),
    0x16: ("SEND_LAST_INV", ["ieth"], True),
    0x17: ("SEND_ONLY_INV", ["ieth"], True),
}
RESPONSES = range(0x0d, 0x13)  # read responses, ACK, atomic ACK


def opcode_table():
    """{opcode: (name, [ext header keys in wire order], has_payload)}."""
    table = {}
    for op, (name, hdrs, payload) in BASE_OPS.items():
        table[op] = ("RC_" + name, hdrs, payload)
        if op <= 0x0b:
            table[0x20 | op] = ("UC_" + name, hdrs, payload)
        xrc = hdrs if op in RESPONSES else ["xrceth"] + hdrs
        table[0xa0 | op] = ("XRC_" + name, xrc, payload)
    table[0x64] = ("UD_SEND_ONLY", ["deth"], True)
    table[0x65] = ("UD_SEND_ONLY_IMM", ["deth", "immdt"], True)
    table[0x81] = ("CNP", ["cnp"], False)
    return table


OPCODES = opcode_table()


# ---------------------------------------------------------------------------
# The ICRC, written from IBTA Annex A17.3.3.

def icrc_ref(frame, l3_off):
    """ICRC of the RoCEv2 packet whose IP header is at frame[l3_off]: CRC-32
    over 8 bytes of 0xff, the IP header with its variant fields set to 1s,
    UDP with its checksum set to 1s, the BTH with byte 4 set to 0xff, and the
    rest up to the ICRC. Returns the 4 bytes as sent (least significant first)."""
    ip = bytearray(frame[l3_off:])
    if ip[0] >> 4 == 4:
        hlen, total = (ip[0] & 0xf) * 4, struct.unpack("!H", ip[2:4])[0]
        ip[1] = 0xff                 # TOS
        ip[8] = 0xff                 # TTL
        ip[10:12] = b"\xff\xff"      # header checksum
    else:
        hlen, total = 40, 40 + struct.unpack("!H", ip[4:6])[0]
        ip[0] |= 0x0f                # traffic class (high nibble)
        ip[1:4] = b"\xff\xff\xff"    # traffic class (low nibble), flow label
        ip[7] = 0xff                 # hop limit
    ip[hlen + 6:hlen + 8] = b"\xff\xff"  # UDP checksum
    ip[hlen + 8 + 4] = 0xff              # BTH FECN, BECN, resv6
    crc = zlib.crc32(b"\xff" * 8 + bytes(ip[:total - ICRC_LEN]))
    return struct.pack("<I", crc)


def scapy_icrc(frame):
    """The ICRC scapy computes for an IPv4 frame (rebuilt as
    Ether/IP/UDP/BTH/Raw(rest) with icrc=None)."""
    pkt = Ether(frame)
    bth = pkt[BTH]
    rest = raw(bth.payload)
    bth.remove_payload()
    bth.icrc = None
    return raw(pkt / Raw(rest))[-ICRC_LEN:]


# ---------------------------------------------------------------------------
# Results.

class Report:
    """Counts frames and failed frames per (part, opcode); keeps the failures."""

    def __init__(self):
        self.counts = collections.defaultdict(lambda: [0, 0])
        self.failures = []

    def frame(self, part, opcode, problems, what):
        entry = self.counts[(part, opcode)]
        entry[0] += 1
        if problems:
            entry[1] += 1
            self.failures.append(f"{part} {what}: " + "; ".join(problems))

    def print_summary(self):
        parts = sorted({p for p, _ in self.counts})
        print("opcode  name                    " + "".join(f"{p:>12}" for p in parts))
        for op in sorted({o for _, o in self.counts}):
            name = OPCODES.get(op, ("?",))[0]
            cells = []
            for p in parts:
                n, bad = self.counts.get((p, op), (0, 0))
                cells.append(f"{n - bad}/{n}".rjust(12) if n else " " * 12)
            print(f"0x{op:02x}    {name:<24}" + "".join(cells))
        for f in self.failures[:40]:
            print("FAIL", f)
        if len(self.failures) > 40:
            print(f"... and {len(self.failures) - 40} more failures")
        return not self.failures


def diff(what, expected, got):
    return [] if expected == got else [f"{what}: expected {expected!r}, got {got!r}"]


# ---------------------------------------------------------------------------
# The tool and pcap files.

def run_tool(tool, *args):
    return subprocess.run([tool, *args], check=True, stdout=subprocess.PIPE,
                          text=True).stdout


def tool_build(tool, tmp, flags):
    """Runs build-all; returns (frames as bytes, their JSON descriptions)."""
    pcap, desc = os.path.join(tmp, "uroce.pcap"), os.path.join(tmp, "uroce.json")
    run_tool(tool, "build-all", pcap, desc, "--seed", str(SEED), *flags)
    with open(desc) as f:
        descs = [canon_addrs(js) for js in json.load(f)["frames"]]
    return [raw(p) for p in rdpcap(pcap)], descs


def tool_parse(tool, tmp, frames):
    """Parses frames with uroce; returns one dict per frame."""
    path = os.path.join(tmp, "in.pcap")
    write_pcap(path, frames)
    out = [canon_addrs(json.loads(line))
           for line in run_tool(tool, "parse", path).splitlines()]
    if len(out) != len(frames):
        raise RuntimeError(f"parse printed {len(out)} results for {len(frames)} frames")
    return out


def write_pcap(path, frames):
    """A classic pcap (linktype Ethernet), the frames byte for byte."""
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
        for i, fr in enumerate(frames):
            f.write(struct.pack("<IIII", i, 0, len(fr), len(fr)) + fr)


# ---------------------------------------------------------------------------
# Comparing a frame scapy dissects with uroce's JSON (u2s, v6).

def canon(addr):
    """An IP address in one spelling, for comparisons."""
    return str(ipaddress.ip_address(addr))


def canon_addrs(js):
    for k in ("src", "dst"):
        if k in js:
            js[k] = canon(js[k])
    return js


def check_l2(pkt, js):
    p = diff("dmac", js["dmac"], pkt[Ether].dst) + diff("smac", js["smac"], pkt[Ether].src)
    p += diff("vlan", bool(js["vlan"]), Dot1Q in pkt)
    if Dot1Q in pkt:
        q = pkt[Dot1Q]  # scapy 2.5 calls the DEI bit "id"
        p += diff("vlan_tci", js["vlan_tci"], q.prio << 13 | q.id << 12 | q.vlan)
    return p


def check_addrs(ip, js):
    return diff("src", js["src"], canon(ip.src)) + diff("dst", js["dst"], canon(ip.dst))


def check_ipv4(ip, l3_off, js):
    p = diff("ip_ver", js["ip_ver"], 4) + diff("ihl", 5, ip.ihl)
    p += diff("ipv4 checksum valid", 0, checksum(raw(ip)[:ip.ihl * 4]))
    p += diff("ip len", js["frame_len"] - l3_off, ip.len)
    p += diff("ip frag", 0, ip.frag) + diff("ip MF", 0, int(ip.flags.MF))
    p += diff("tclass", js["tclass"], ip.tos) + diff("hop_limit", js["hop_limit"], ip.ttl)
    return p + diff("proto", 17, ip.proto) + check_addrs(ip, js)


def check_ipv6(ip, l3_off, js):
    p = diff("ip_ver", js["ip_ver"], 6) + diff("next header", 17, ip.nh)
    p += diff("payload length", js["frame_len"] - l3_off - 40, ip.plen)
    p += diff("tclass", js["tclass"], ip.tc) + diff("flow_label", js["flow_label"], ip.fl)
    p += diff("hop_limit", js["hop_limit"], ip.hlim)
    return p + check_addrs(ip, js)


def check_udp(udp, js):
    p = diff("udp_sport", js["udp_sport"], udp.sport) + diff("dport", ROCE_PORT, udp.dport)
    return p + diff("udp len", len(raw(udp)), udp.len)


BTH_KEYS = {"opcode": "opcode", "se": "solicited", "mig": "migreq", "pad": "padcount",
            "tver": "version", "pkey": "pkey", "fecn": "fecn", "becn": "becn",
            "dqpn": "dqpn", "ackreq": "ackreq", "psn": "psn"}


def check_bth(bth, js):
    p = [f"bth {k}: expected {js[k]}, got {getattr(bth, s)}"
         for k, s in BTH_KEYS.items() if int(js[k]) != getattr(bth, s)]
    return p + diff("bth resv6", 0, bth.resv6) + diff("bth resv7", 0, bth.resv7)


def dissect_ext(opcode, rest):
    """Splits what follows the BTH (without the ICRC) by the python opcode
    table: returns ({key: {field: value}}, payload and pad bytes)."""
    ext, off = {}, 0
    for key in OPCODES[opcode][1]:
        n = ext_len(key)
        layer = EXT_LAYERS[key](rest[off:off + n])
        ext[key] = {f.name: getattr(layer, f.name) for f in ext_fields(key)}
        off += n
    return ext, rest[off:]


def check_transport(bth, js):
    if bth.opcode not in OPCODES:
        return [f"opcode 0x{bth.opcode:02x} is not in IBTA Table 38"]
    ext, body = dissect_ext(bth.opcode, raw(bth.payload))
    pad = bth.padcount
    payload = body[:len(body) - pad]
    p = check_bth(bth, js) + diff("ext", js["ext"], ext)
    p += diff("pad bytes", b"\0" * pad, body[len(body) - pad:])
    p += diff("payload", js["payload"], payload.hex())
    return p + diff("payload_len", js["payload_len"], len(payload))


def check_icrc(frame, l3_off, js):
    got = frame[js["frame_len"] - ICRC_LEN:js["frame_len"]]
    p = diff("icrc (JSON)", struct.pack("<I", js["icrc"]), got)
    p += diff("icrc (python)", icrc_ref(frame, l3_off).hex(), got.hex())
    if frame[l3_off] >> 4 == 4:
        p += diff("icrc (scapy)", scapy_icrc(frame).hex(), got.hex())
    return p


def check_uroce_frame(frame, js):
    """All problems found comparing scapy's view of a uroce frame with its JSON."""
    pkt = Ether(frame)
    if BTH not in pkt:
        return ["scapy finds no BTH"]
    ip = pkt[IP] if IP in pkt else pkt[IPv6]
    l3_off = len(frame) - len(raw(ip))
    p = diff("frame_len", js["frame_len"], len(frame)) + check_l2(pkt, js)
    p += check_ipv4(ip, l3_off, js) if IP in pkt else check_ipv6(ip, l3_off, js)
    p += check_udp(pkt[UDP], js) + check_transport(pkt[BTH], js)
    return p + check_icrc(frame, l3_off, js)


def uroce_to_scapy(tool, tmp, rep, part, flags):
    frames, descs = tool_build(tool, tmp, flags)
    if len(frames) != len(descs):
        rep.frame(part, -1, [f"{len(frames)} frames, {len(descs)} in JSON"], "build-all")
        return
    built = sorted({d["opcode"] for d in descs})
    if built != sorted(OPCODES):
        missing = sorted(set(OPCODES) - set(built))
        extra = sorted(set(built) - set(OPCODES))
        rep.frame(part, -1, [f"uroce's valid opcodes differ from IBTA: missing "
                             f"{[hex(o) for o in missing]}, extra {[hex(o) for o in extra]}"],
                  "opcode table")
    for frame, js in zip(frames, descs):
        rep.frame(part, js["opcode"], check_uroce_frame(frame, js) + check_ect(frame, js, flags),
                  f"frame {js['index']} opcode 0x{js['opcode']:02x} {' '.join(flags)}")


def check_ect(frame, js, flags):
    """With --ect, the ECN bits scapy decodes: ECT(0) (0b10) on RC and UC
    data and requests, the random path's own bits elsewhere; a CNP has
    BECN set, FECN clear, PSN 0, 16 zero reserved bytes (A17.9.2)."""
    if "--ect" not in flags:
        return []
    pkt = Ether(frame)
    ip = pkt[IP] if IP in pkt else pkt[IPv6]
    ecn = (ip.tos if IP in pkt else ip.tc) & 3
    op = js["opcode"]
    data = (op < 0x40) and (op & 0x1f) not in (0x11, 0x12)
    p = []
    if data and ecn != 2:
        p.append(f"ECN {ecn} on a data opcode, want ECT(0) 2")
    if op == 0x81:
        b = pkt[BTH]
        if (b.becn, b.fecn, b.psn) != (1, 0, 0):
            p.append(f"CNP becn {b.becn} fecn {b.fecn} psn {b.psn}, want 1 0 0")
        if bytes(pkt[BTH].payload)[:16] != bytes(16):
            p.append("CNP reserved bytes not zero")
    return p


# ---------------------------------------------------------------------------
# Frames built by scapy (s2u, neg).

def rand_mac(rng):
    return ":".join(f"{b:02x}" for b in [rng.randrange(0, 256, 2)] +
                    [rng.randrange(256) for _ in range(5)])


def rand_ipv4(rng):
    return f"{rng.randint(1, 223)}." + ".".join(str(rng.randrange(256)) for _ in range(3))


def rand_ipv6(rng):
    words = [0xfd00 | rng.randrange(256)] + [rng.randrange(1 << 16) for _ in range(7)]
    return ":".join(f"{w:x}" for w in words)


def rand_ext(rng, key):
    """A layer with random values in its named fields (reserved ones 0)."""
    vals = {f.name: rng.getrandbits(field_bits(f)) for f in ext_fields(key)}
    return EXT_LAYERS[key](**vals), vals


def rand_bth(rng, opcode, pad):
    js = {"opcode": opcode, "pad": pad, "tver": 0, "pkey": rng.getrandbits(16),
          "dqpn": rng.getrandbits(24), "psn": rng.getrandbits(24)}
    for k in ("se", "mig", "fecn", "becn", "ackreq"):
        js[k] = rng.getrandbits(1)
    return BTH(**{s: js[k] for k, s in BTH_KEYS.items()}), js


def rand_l2l3(rng, ipv6, vlan):
    """Ether[/Dot1Q]/IP|IPv6/UDP with random fields, and their JSON values."""
    js = {"vlan": int(vlan), "vlan_tci": 0, "tclass": rng.getrandbits(8),
          "hop_limit": rng.randint(1, 255), "udp_sport": rng.randint(0xc000, 0xffff),
          "ip_ver": 6 if ipv6 else 4, "flow_label": 0}
    pkt = Ether(src=rand_mac(rng), dst=rand_mac(rng))
    if vlan:
        js["vlan_tci"] = rng.getrandbits(4) << 12 | rng.randint(1, 4094)
        pkt /= Dot1Q(prio=js["vlan_tci"] >> 13, id=js["vlan_tci"] >> 12 & 1,
                     vlan=js["vlan_tci"] & 0xfff)
    if ipv6:
        js.update(src=rand_ipv6(rng), dst=rand_ipv6(rng), flow_label=rng.getrandbits(20))
        pkt /= IPv6(src=js["src"], dst=js["dst"], tc=js["tclass"], fl=js["flow_label"],
                    hlim=js["hop_limit"])
    else:
        js.update(src=rand_ipv4(rng), dst=rand_ipv4(rng))
        pkt /= IP(src=js["src"], dst=js["dst"], tos=js["tclass"], ttl=js["hop_limit"],
                  id=rng.getrandbits(16), flags=rng.choice(["", "DF"]))
    # RoCE NICs send UDP checksum 0 over IPv6 too; scapy would sum a 0 ICRC.
    udp = UDP(sport=js["udp_sport"], dport=ROCE_PORT, chksum=0 if ipv6 else None)
    return pkt / udp, js


def scapy_frame(rng, opcode, payload_len, ipv6=False, vlan=False):
    """A frame scapy builds, and the JSON uroce's parser must report for it."""
    pad = -payload_len % 4
    pkt, js = rand_l2l3(rng, ipv6, vlan)
    bth, bjs = rand_bth(rng, opcode, pad)
    bth.icrc = 0 if ipv6 else None  # scapy computes the ICRC for IPv4 only
    pkt /= bth
    js.update(bjs, ext={})
    for key in OPCODES[opcode][1]:
        layer, js["ext"][key] = rand_ext(rng, key)
        pkt /= layer
    payload = bytes(rng.getrandbits(8) for _ in range(payload_len))
    frame = bytearray(raw(pkt / Raw(payload + b"\0" * pad)))
    l3_off = 14 + 4 * vlan
    if ipv6:  # scapy left the ICRC 0 for IPv6
        frame[-ICRC_LEN:] = icrc_ref(frame, l3_off)
    canon_addrs(js)
    js.update(payload=payload.hex(), payload_len=payload_len, frame_len=len(frame),
              icrc=struct.unpack("<I", frame[-ICRC_LEN:])[0], l3_off=l3_off,
              l4_off=l3_off + (40 if ipv6 else 20), bth_off=l3_off + (48 if ipv6 else 28))
    js["payload_off"] = js["bth_off"] + BTH_LEN + sum(ext_len(k) for k in js["ext"])
    return bytes(frame), js


def payload_lens(rng, opcode):
    """One length of each pad count (0..3) up to ~1500 bytes, then 0."""
    if not OPCODES[opcode][2]:
        return [0] * 4
    return [4 * rng.randrange(375) + k for k in range(4)] + [0]


def scapy_frames(rng):
    """[(frame, expected JSON)] for every opcode, over IPv4 and IPv6, with and
    without VLAN."""
    out = []
    for opcode in sorted(OPCODES):
        for i, n in enumerate(payload_lens(rng, opcode)):
            out.append(scapy_frame(rng, opcode, n, ipv6=bool(i & 2), vlan=bool(i & 1)))
    return out


PARSE_KEYS = ("opcode", "se", "mig", "pad", "tver", "pkey", "fecn", "becn", "dqpn",
              "ackreq", "psn", "ext", "payload_len", "payload", "ip_ver", "src", "dst",
              "tclass", "hop_limit", "flow_label", "udp_sport", "vlan", "vlan_tci",
              "icrc", "frame_len", "l3_off", "l4_off", "bth_off", "payload_off")


def compare_parsed(expected, got):
    if got["verdict"] != "ok":
        return [f"verdict {got['verdict']}"]
    return [f"{k}: expected {expected[k]!r}, got {got.get(k)!r}"
            for k in PARSE_KEYS if expected[k] != got.get(k)]


def scapy_to_uroce(tool, tmp, rep, cases):
    """Every scapy frame must parse with the fields scapy was given; frames
    shorter than the Ethernet minimum are also sent padded to 60 bytes."""
    frames = [f for f, _ in cases]
    padded = [(f + b"\0" * (60 - len(f)), js) for f, js in cases if len(f) < 60]
    results = tool_parse(tool, tmp, frames + [f for f, _ in padded])
    for (frame, js), got in zip(cases + padded, results):
        what = f"opcode 0x{js['opcode']:02x} payload {js['payload_len']} ip{js['ip_ver']}" + \
               (" vlan" if js["vlan"] else "") + (" padded" if len(frame) > js["frame_len"] else "")
        rep.frame("s2u", js["opcode"], compare_parsed(js, got), what)


# ---------------------------------------------------------------------------
# Negative cases.

def flip(frame, i):
    return frame[:i] + bytes([frame[i] ^ 0xff]) + frame[i + 1:]


def flip_expectation(js, i):
    """What uroce must say when byte i of a good frame is inverted: 'any'
    (not checked), 'ok' (a variant field the ICRC masks), 'fecn' (ok, with
    FECN and BECN inverted), 'bad_icrc', or 'drop' (any named drop)."""
    l3, udp_csum = js["l3_off"], js["l4_off"] + 6
    if i < l3 - 2 or udp_csum <= i < udp_csum + 2:
        return "any"  # MACs and VLAN tag are not protected; UDP checksum is masked
    if js["ip_ver"] == 6 and i - l3 in (1, 2, 3, 7):
        return "ok"   # IPv6 traffic class, flow label, hop limit
    if i == js["bth_off"] + 4:
        return "fecn"
    if js["payload_off"] <= i < js["frame_len"] - ICRC_LEN - js["pad"]:
        return "bad_icrc"
    return "drop"   # IPv4 TOS and TTL too: the header checksum covers them


def flip_problem(expect, js, got):
    v = got["verdict"]
    if expect == "any":
        return []
    if expect == "ok":
        return diff("verdict", "ok", v)
    if expect == "fecn":
        if v != "ok":
            return [f"verdict {v}, expected ok"]
        return diff("fecn", 1 - js["fecn"], got["fecn"]) + diff("becn", 1 - js["becn"], got["becn"])
    if expect == "bad_icrc":
        return diff("verdict", "bad_icrc", v)
    return [] if v not in ("ok", "?") else [f"verdict {v!r}, expected a named drop"]


def with_tail(frame, tail, padcount):
    """An IPv4 frame with everything after its extension headers replaced by
    tail and the pad count set, lengths, checksums and ICRC made right."""
    pkt = Ether(frame)
    bth = pkt[BTH]
    hdrs = raw(bth.payload)[:sum(ext_len(k) for k in OPCODES[bth.opcode][1])]
    bth.remove_payload()
    bth.padcount, bth.icrc = padcount, None
    pkt[IP].len = pkt[IP].chksum = pkt[UDP].len = pkt[UDP].chksum = None
    return raw(pkt / Raw(hdrs + tail))


def length_cases(cases):
    """Frames whose only fault is their transport length (IBTA C9-7, 9.4):
    a payload on an opcode that takes none, or a pad byte missing."""
    tests = []
    for frame, js in cases:
        if js["ip_ver"] != 4:
            continue
        if not OPCODES[js["opcode"]][2]:
            tests.append((with_tail(frame, b"\xa5" * 4, 0), js, "drop", "4 bytes of payload"))
        elif js["pad"]:
            tail = bytes.fromhex(js["payload"]) + b"\0" * (js["pad"] - 1)
            tests.append((with_tail(frame, tail, js["pad"]), js, "drop", "a pad byte missing"))
    return tests


def negative_cases(tool, tmp, rep, cases):
    """Each byte flipped in turn, and every truncation, of each frame, and
    the length_cases()."""
    tests = length_cases(cases)  # (frame, base JSON, expectation, description)
    for frame, js in cases:
        for i in range(len(frame)):
            tests.append((flip(frame, i), js, flip_expectation(js, i), f"byte {i} flipped"))
        for n in range(len(frame)):
            tests.append((frame[:n], js, "drop", f"truncated to {n}"))
    results = tool_parse(tool, tmp, [t[0] for t in tests])
    verdicts = collections.Counter()
    for (_, js, expect, what), got in zip(tests, results):
        verdicts[got["verdict"]] += 1
        rep.frame("neg", js["opcode"], flip_problem(expect, js, got),
                  f"opcode 0x{js['opcode']:02x} {what}")
    print("negative cases, verdicts:", dict(sorted(verdicts.items())))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tool", required=True, help="path of uroce-wire-tool")
    args = ap.parse_args()
    rep, rng = Report(), random.Random(SEED)
    with tempfile.TemporaryDirectory(prefix="uroce-wire-") as tmp:
        uroce_to_scapy(args.tool, tmp, rep, "u2s", [])
        uroce_to_scapy(args.tool, tmp, rep, "u2s", ["--vlan"])
        uroce_to_scapy(args.tool, tmp, rep, "v6", ["--ipv6"])
        uroce_to_scapy(args.tool, tmp, rep, "v6", ["--ipv6", "--vlan"])
        # ECT(0) on RC/UC data, CNPs from uroce_wire_cnp_bth()
        uroce_to_scapy(args.tool, tmp, rep, "ect", ["--ect"])
        uroce_to_scapy(args.tool, tmp, rep, "ect", ["--ect", "--ipv6", "--vlan"])
        scapy_to_uroce(args.tool, tmp, rep, scapy_frames(rng))
        short = [scapy_frame(rng, op, 5 if OPCODES[op][2] else 0, ipv6=v6, vlan=bool(op & 1))
                 for op in sorted(OPCODES) for v6 in (False, True)]
        negative_cases(args.tool, tmp, rep, short)
    return 0 if rep.print_summary() else 1


if __name__ == "__main__":
    sys.exit(main())
