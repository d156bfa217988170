#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The uroce authors
#
# uroce on AF_XDP against the link's ceiling, af_packet and kernel TCP,
# on one veth pair between two network namespaces:
#
#	bench/xdp/run.sh [BUILD_DIR] [OUT_DIR]
#
# BUILD_DIR: the build with app/perf/uroce-perf (default: build);
# OUT_DIR: where the results go (default: BUILD_DIR/bench/xdp).
#  1. xdp      uroce-perf, RC WRITE 64 KiB, on AF_XDP ports (af_xdp:IFACE,
#              our XDP program; kernel addresses and neighbours)
#  2. xdp-raw  uroce-perf --raw on the same AF_XDP ports: the raw DPDK
#              ceiling (rte_eth_tx_burst/rx_burst of the same frames, no
#              transport)
#  3. afp      uroce-perf, RC WRITE 64 KiB, on af_packet (the fallback,
#              qdisc_bypass) on the same veth
#  4. afp-raw  its raw ceiling
#  5. tcp      iperf3 (kernel TCP, one stream) on the same veth
#
# Each row: goodput (Gbit/s of payload) and CPU time per GB moved: the
# user + system time of both ends' processes (getrusage) over the whole
# run, start-up included, divided by the bytes. uroce-perf's ends poll: each
# burns a core for its whole life, so their CPU per GB is about 2 cores x
# run time / bytes. Kernel work done outside the processes (ksoftirqd) is
# not counted, which favours iperf3 a little. Each uroce-perf run is one
# phase (--rounds 1), so that its bytes are those of its CPU time.
# Environment: XDP_BENCH_SECONDS (5 per run), XDP_BENCH_MTU (veth MTU,
# 1500). Results: OUT_DIR/xdp.json and the table on stdout. Root only
# (namespaces); runs under /tmp/uroce-net.lock when flock(1) is there.
set -u
here=$(dirname "$(readlink -f "$0")")
build=$(readlink -f "${1:-$here/../../build}")
out=${2:-$build/bench/xdp}
perf=$build/app/perf/uroce-perf
[ -x "$perf" ] || { echo "run.sh: no $perf (build first)" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || { echo "run.sh: needs root (namespaces)" >&2; exit 2; }
command -v iperf3 >/dev/null || { echo "run.sh: no iperf3" >&2; exit 2; }
secs=${XDP_BENCH_SECONDS:-5}
mtu=${XDP_BENCH_MTU:-1500}
if [ -z "${XDP_BENCH_LOCKED:-}" ] && command -v flock >/dev/null; then
	XDP_BENCH_LOCKED=1 exec flock /tmp/uroce-net.lock "$0" "$@"
fi

tag=xb$$
ns_a=uroce-xdpb-$tag-a
ns_b=uroce-xdpb-$tag-b
if_a=${tag}a
if_b=${tag}b
tmp=$(mktemp -d /tmp/uroce-xdpb.XXXXXX) || exit 1
mkdir -p "$out" || exit 1

cleanup() {
	ip netns del "$ns_a" 2>/dev/null
	ip netns del "$ns_b" 2>/dev/null
	rm -rf "$tmp" /var/run/dpdk/uroce-$tag-*
}
trap cleanup EXIT
trap 'exit 1' INT TERM

ip netns add "$ns_a" && ip netns add "$ns_b" || exit 1
ip -n "$ns_a" link add "$if_a" mtu "$mtu" type veth peer name "$if_b" \
	mtu "$mtu" netns "$ns_b" || exit 1
for s in a b; do
	ns=ns_$s ifc=if_$s
	ip -n "${!ns}" link set "${!ifc}" up
	ip -n "${!ns}" addr add 10.82.0.$([ $s = a ] && echo 1 || echo 2)/24 \
		dev "${!ifc}"
done

# conf NAME SIDE DEV: a one-port config without ip ([port] dev only).
conf() {
	cat >"$tmp/$1-$2.conf" <<EOF
[port]
dev = $3
$( [ "$1" = afp ] && printf 'neigh = kernel\n')
[eal]
lcores = 1
args = --no-pci ${UROCE_TEST_MEM:---no-huge -m 256} --file-prefix=uroce-$tag-$2 --log-level=*:warning
EOF
}
conf xdp a "af_xdp:$if_a"
conf xdp b "af_xdp:$if_b"
conf afp a "net_af_packet0,iface=$if_a,qdisc_bypass=1"
conf afp b "net_af_packet0,iface=$if_b,qdisc_bypass=1"

# cpu FILE CMD...: run CMD, write its user + system seconds to FILE.
cpu() {
	/usr/bin/python3 -c '
import resource, subprocess, sys
rc = subprocess.call(sys.argv[2:])
u = resource.getrusage(resource.RUSAGE_CHILDREN)
open(sys.argv[1], "w").write("%.3f\n" % (u.ru_utime + u.ru_stime))
sys.exit(rc)' "$@"
}

# perf NAME LINK [--raw|--no-raw]: one uroce-perf pair; its JSON in $tmp.
perf() {
	local name=$1 link=$2 spid rc
	cpu "$tmp/$name.cpu_a" ip netns exec "$ns_a" "$perf" \
		-c "$tmp/$link-a.conf" --server --quiet >"$tmp/$name-a.log" 2>&1 &
	spid=$!
	sleep 2
	cpu "$tmp/$name.cpu_b" ip netns exec "$ns_b" "$perf" \
		-c "$tmp/$link-b.conf" --connect 10.82.0.1 -w write -s 65536 \
		-m bw -D "$secs" --rounds 1 --quiet "$3" --json "$tmp/$name.json" \
		>"$tmp/$name-b.log" 2>&1
	rc=$?
	wait "$spid" || rc=$((rc ? rc : $?))
	[ $rc -eq 0 ] || { echo "$name: failed"; tail -n 5 "$tmp/$name"-?.log; }
}

tcp() {
	local spid
	cpu "$tmp/tcp.cpu_a" ip netns exec "$ns_a" iperf3 -s -1 -B 10.82.0.1 \
		>/dev/null 2>&1 &
	spid=$!
	sleep 1
	cpu "$tmp/tcp.cpu_b" ip netns exec "$ns_b" iperf3 -c 10.82.0.1 \
		-t "$secs" -J >"$tmp/tcp.json" 2>"$tmp/tcp.err" ||
		{ echo "tcp: failed"; cat "$tmp/tcp.err"; }
	wait "$spid"
}

perf xdp xdp --no-raw
perf xdp-raw xdp --raw
perf afp afp --no-raw
perf afp-raw afp --raw
tcp

/usr/bin/python3 - "$tmp" "$out/xdp.json" "$mtu" "$secs" <<'EOF'
import json, os, sys
tmp, out, mtu, secs = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])

def cpu(name):
    try:
        return sum(float(open(f"{tmp}/{name}.cpu_{s}").read()) for s in "ab")
    except (OSError, ValueError):
        return None

def perf_row(name, what):
    try:
        r = json.load(open(f"{tmp}/{name}.json"))["results"][0]
    except (OSError, ValueError, KeyError, IndexError):
        return dict(name=name, what=what, error="no result")
    raw = name.endswith("-raw")
    g = r["raw"]["goodput_gbps"] if raw else r["goodput_gbps"]
    s = r["raw"]["seconds"] if raw else r["seconds"]
    return dict(name=name, what=what, goodput_gbps=g, seconds=s,
                bytes=g * 1e9 / 8 * s, path_mtu=None if raw else
                json.load(open(f"{tmp}/{name}.json"))["path_mtu"])

def tcp_row():
    try:
        e = json.load(open(f"{tmp}/tcp.json"))["end"]["sum_received"]
    except (OSError, ValueError, KeyError):
        return dict(name="tcp", what="iperf3", error="no result")
    return dict(name="tcp", what="kernel TCP (iperf3, 1 stream)",
                goodput_gbps=e["bits_per_second"] / 1e9,
                seconds=e["seconds"], bytes=e["bytes"])

rows = [perf_row("xdp", "uroce RC WRITE 64 KiB, AF_XDP"),
        perf_row("xdp-raw", "raw DPDK ceiling, AF_XDP"),
        perf_row("afp", "uroce RC WRITE 64 KiB, af_packet"),
        perf_row("afp-raw", "raw DPDK ceiling, af_packet"),
        tcp_row()]
for r in rows:
    c = cpu(r["name"])
    r["cpu_s"] = c
    if c is not None and r.get("bytes"):
        r["cpu_s_per_gb"] = c / (r["bytes"] / 1e9)
by = {r["name"]: r for r in rows}
def ratio(a, b):
    try:
        return by[a]["goodput_gbps"] / by[b]["goodput_gbps"]
    except (KeyError, ZeroDivisionError):
        return None
res = dict(veth_mtu=mtu, seconds=secs, rows=rows,
           xdp_vs_raw=ratio("xdp", "xdp-raw"), xdp_vs_tcp=ratio("xdp", "tcp"),
           xdp_vs_afp=ratio("xdp", "afp"),
           note="shared 2-core machine; CPU = user+system of both ends")
json.dump(res, open(out, "w"), indent=1)
print(f"veth MTU {mtu}, {secs:g} s per run")
print(f"{'run':8} {'Gbit/s':>8} {'CPU s':>7} {'CPU s/GB':>9}  what")
for r in rows:
    if "error" in r:
        print(f"{r['name']:8} {'-':>8} {'-':>7} {'-':>9}  {r['what']}: {r['error']}")
        continue
    print(f"{r['name']:8} {r['goodput_gbps']:8.3f} {r['cpu_s']:7.2f} "
          f"{r.get('cpu_s_per_gb', 0):9.2f}  {r['what']}")
for k in ("xdp_vs_raw", "xdp_vs_tcp", "xdp_vs_afp"):
    if res[k] is not None:
        print(f"{k}: {res[k]:.2f}")
EOF
