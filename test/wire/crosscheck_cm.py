#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The uroce authors
"""Cross-check uroce's CM MADs against tshark's InfiniBand dissector.

`uroce-cm-tool build` writes CM MADs of every type uroce handles (REQ, MRA,
REJ, REP, RTU, DREQ, DREP, SIDR_REQ, SIDR_REP) with random field values,
each in a RoCEv2 UD SEND to QP1 over IPv4 and IPv6, and a JSON of every
field's value. tshark decodes the pcap (UDP 4791 as InfiniBand, payload
heuristics off). Each frame must be a UD SEND to QP 1 with P_Key 0xFFFF,
DETH Q_Key 0x80010000 and source QP 1, carry a CM MAD tshark decodes
without a malformed mark or an expert warning, its MAD header fields and
the 232 bytes after the header equal to what uroce wrote, and every CM
field tshark 4.0 exposes equal to uroce's value.

What tshark 4.0 does not dissect or reads differently:
- MRA, SIDR_REQ and SIDR_REP: only the MAD header and the data bytes.
- REQ: the primary and alternate flow label and packet rate. IBTA vol. 1
  Table 106 (and Linux's include/rdma/ibta_vol1_c12.h) put the flow label
  in the 20 high bits of bytes 88-91 and the packet rate in the 6 low bits
  of byte 91; tshark shows the 12 high bits as the flow label and another
  slice as the rate. The bytes are checked through the MAD data instead.
  SAP Supported (byte 139 bit 5) tshark counts as reserved.
- REP: the ECE vendor ID bytes (reserved before IBA comment 9434).
"""

import argparse
import ipaddress
import json
import os
import subprocess
import sys
import tempfile

EXPERT_WARN = 0x00600000

PAYLOAD_HEURISTICS = [
    "drbd_rdma", "eth_over_ib", "fc_infiniband", "iser_infiniband", "lnet_ib",
    "mellanox_eoib", "nvme_rdma", "rpcrdma_infiniband", "sdp_infiniband",
    "smb_direct_infiniband", "smcr_infiniband",
]

HDR = {
    "infiniband.mad.baseversion": "base_version",
    "infiniband.mad.mgmtclass": "mgmt_class",
    "infiniband.mad.classversion": "class_version",
    "infiniband.mad.method": "method",
    "infiniband.mad.status": "status",
    "infiniband.mad.classspecific": "class_specific",
    "infiniband.mad.transactionid": "tid",
    "infiniband.mad.attributeid": "attr_id",
    "infiniband.mad.attributemodifier": "attr_mod",
}

R = "infiniband.cm.req."
PATH = {"locallid": "local_lid", "remotelid": "remote_lid",
        "tfcclass": "traffic_class", "hoplim": "hop_limit", "sl": "sl",
        "subnetlocal": "subnet_local", "localacktout": "local_ack_timeout"}
REQ = {
    "infiniband.cm.req": "local_comm_id", R + "serviceid": "service_id",
    R + "localcaguid": "local_ca_guid", R + "localqkey": "local_qkey",
    R + "localqpn": "local_qpn", R + "responderres": "responder_resources",
    R + "localeecn": "local_eecn", R + "initdepth": "initiator_depth",
    R + "remoteeecn": "remote_eecn", R + "remoteresptout": "remote_cm_resp_timeout",
    R + "transpsvctype": "transport_type", R + "e2eflowctrl": "e2e_flow_control",
    R + "startpsn": "starting_psn", R + "localresptout": "local_cm_resp_timeout",
    R + "retrcount": "retry_count", R + "pkey": "pkey", R + "pppmtu": "path_mtu",
    R + "rdcexist": "rdc_exists", R + "rnrretrcount": "rnr_retry_count",
    R + "maxcmretr": "max_cm_retries", R + "srq": "srq",
    R + "ext_transport": "ext_transport",
    **{R + "prim_" + k: "primary_" + v for k, v in PATH.items()},
    **{R + "alt_" + k: "alternate_" + v for k, v in PATH.items()},
    R + "alt_localgid": "alternate_local_gid",
    R + "alt_remotegid": "alternate_remote_gid",
}
P = "infiniband.cm.rep."
REP = {
    "infiniband.cm.rep": "local_comm_id", P + "remotecommid": "remote_comm_id",
    P + "localqkey": "local_qkey", P + "localqpn": "local_qpn",
    P + "localeecn": "local_eecn", P + "startpsn": "starting_psn",
    P + "respres": "responder_resources", P + "initdepth": "initiator_depth",
    P + "tgtackdelay": "target_ack_delay", P + "failoveracc": "failover_accepted",
    P + "e2eflowctrl": "e2e_flow_control", P + "rnrretrcount": "rnr_retry_count",
    P + "srq": "srq", P + "localcaguid": "local_ca_guid", P + "private": "private_data",
}
J = "infiniband.cm.rej."
REJ = {J + "localcommid": "local_comm_id", J + "remotecommid": "remote_comm_id",
       J + "msgrej": "msg_rejected", J + "rejinfolen": "ari_len",
       J + "reason": "reason", J + "ari": "ari", J + "private": "private_data"}


def pair(pfx):
    return {pfx + "localcommid": "local_comm_id", pfx + "remotecommid": "remote_comm_id",
            pfx + "private": "private_data"}


MSGS = {
    "REQ": REQ, "REP": REP, "REJ": REJ,
    "RTU": pair("infiniband.cm.rtu."),
    "DREQ": {**pair("infiniband.cm.dreq."),
             "infiniband.cm.req.remoteqpneecn": "remote_qpn"},
    "DREP": pair("infiniband.cm.drsp."),
    "MRA": {}, "SIDR_REQ": {}, "SIDR_REP": {},
}

BYTES_OF = {"private_data", "ari", "alternate_local_gid", "alternate_remote_gid"}

GIDS = [R + f for f in ("prim_localgid", "prim_remotegid", "prim_localgid_ipv4",
                        "prim_remotegid_ipv4")]
IPCM = [R + "ip_cm." + f for f in ("majv", "minv", "ipv", "sport", "sip4", "dip4",
                                   "sip6", "dip6", "private")]
OTHER = ["frame.protocols", "_ws.malformed", "_ws.expert.severity",
         "_ws.expert.message", "infiniband.bth.opcode", "infiniband.bth.p_key",
         "infiniband.bth.destqp", "infiniband.bth.psn", "infiniband.deth.q_key",
         "infiniband.deth.srcqp", "infiniband.mad.data", R + "private"]


def all_fields():
    f = list(HDR) + OTHER + GIDS + IPCM
    for m in MSGS.values():
        f += [k for k in m if k not in f]
    return f


# RoCEv2 senders put UDP checksum 0 over IPv6 too (as crosscheck_tshark.py).
PREFS = ["udp.ignore_ipv6_zero_checksum:TRUE"]


def run_tshark(tshark, pcap, fields):
    cmd = [tshark, "-r", pcap, "-T", "json", "-d", "udp.port==4791,infiniband"]
    for p in PREFS:
        cmd += ["-o", p]
    for h in PAYLOAD_HEURISTICS:
        cmd += ["--disable-heuristic", h]
    for f in fields:
        cmd += ["-e", f]
    res = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if res.returncode != 0 or "can't disable" in res.stderr:
        raise RuntimeError(f"tshark failed: {res.stderr.strip()}")
    return [pkt["_source"]["layers"] for pkt in json.loads(res.stdout)]


def first(t, f):
    v = t.get(f)
    return v[0] if v else None


def num(t, f):
    s = first(t, f)
    return None if s is None else int(s, 0)


def hexbytes(t, f):
    s = first(t, f)
    return None if s is None else s.replace(":", "").lower()


def diff(what, want, got):
    return [] if want == got else [f"{what}: uroce {want!r}, tshark {got!r}"]


def check_frame(t, js):
    protos = first(t, "frame.protocols") or ""
    p = [] if ":udp:infiniband" in protos else [f"not RoCEv2: {protos}"]
    if "_ws.malformed" in t or "malformed" in protos:
        p.append("malformed")
    for sev, msg in zip(t.get("_ws.expert.severity", []), t.get("_ws.expert.message", [])):
        if int(sev) >= EXPERT_WARN:
            p.append(f"expert: {msg}")
    # The GSI's UD SEND: opcode 0x64 to QP 1, default P_Key, Q_Key, source QP 1.
    for f, want in (("infiniband.bth.opcode", 0x64), ("infiniband.bth.p_key", 0xffff),
                    ("infiniband.bth.destqp", 1), ("infiniband.bth.psn", js["psn"]),
                    ("infiniband.deth.q_key", 0x80010000), ("infiniband.deth.srcqp", 1)):
        p += diff(f, want, num(t, f))
    for f, k in HDR.items():
        p += diff(f, js[k], num(t, f))
    p += diff("MAD data", js["mad"][48:], hexbytes(t, "infiniband.mad.data"))
    for f, k in MSGS[js["name"]].items():
        got = hexbytes(t, f) if k in BYTES_OF else num(t, f)
        if k == "private_data" and js["name"] == "REQ":
            continue
        p += diff(f, js[k], got)
    if js["name"] == "REQ":
        p += check_req(t, js)
    return p


def gid_check(t, js, side):
    gid = ipaddress.IPv6Address(bytes.fromhex(js[f"primary_{side}_gid"]))
    v4 = gid.ipv4_mapped
    f = R + f"prim_{side}gid" + ("_ipv4" if v4 else "")
    got = first(t, f)
    return diff(f, v4 or gid, got and ipaddress.ip_address(got))


def check_req(t, js):
    p = gid_check(t, js, "local") + gid_check(t, js, "remote")
    priv = js["private_data"]
    if not js["cma"]:
        return p + diff(R + "private", priv, hexbytes(t, R + "private"))
    # An rdma_cm REQ: tshark reads the CMA header (annex A11) itself.
    v = js["ip_ver"]
    p += diff("ip_cm major.minor", (0, 0), (num(t, R + "ip_cm.majv"), num(t, R + "ip_cm.minv")))
    p += diff("ip_cm.ipv", v, num(t, R + "ip_cm.ipv"))
    p += diff("ip_cm.sport", int(priv[4:8], 16), num(t, R + "ip_cm.sport"))
    for f, gid in (("sip", "primary_local_gid"), ("dip", "primary_remote_gid")):
        a = ipaddress.IPv6Address(bytes.fromhex(js[gid]))
        want = a.ipv4_mapped if v == 4 else a
        got = first(t, R + f"ip_cm.{f}{v}")
        p += diff(f"ip_cm.{f}{v}", want, got and ipaddress.ip_address(got))
    return p + diff("ip_cm.private", priv[72:], hexbytes(t, R + "ip_cm.private"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tool", required=True)
    ap.add_argument("--tshark", default="tshark")
    args = ap.parse_args()
    failures, seen = [], {}
    with tempfile.TemporaryDirectory() as tmp:
        pcap, js = os.path.join(tmp, "cm.pcap"), os.path.join(tmp, "cm.json")
        subprocess.run([args.tool, "build", pcap, js], check=True)
        with open(js) as f:
            descs = json.load(f)["frames"]
        decoded = run_tshark(args.tshark, pcap, all_fields())
    if len(decoded) != len(descs) or not descs:
        print(f"FAIL: {len(descs)} frames built, {len(decoded)} decoded")
        return 1
    for t, d in zip(decoded, descs):
        seen[d["name"]] = seen.get(d["name"], 0) + 1
        for problem in check_frame(t, d):
            failures.append(f"frame {d['index']} ({d['name']}, IPv{d['ip_ver']}): {problem}")
    for name in MSGS:
        if not seen.get(name):
            failures.append(f"no {name} built")
    for f in failures:
        print("FAIL:", f)
    print(f"{len(descs)} CM MADs ({', '.join(f'{n} {c}' for n, c in seen.items())}): "
          f"{len(failures)} problems")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
