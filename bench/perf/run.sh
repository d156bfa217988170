#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The uroce authors
#
# perftest's ib_write_bw through uroce-run against uroce-perf --verbs,
# with the same parameters on the same port pair, then native uroce-perf
# for the cost of the verbs layer: RC WRITE, 64 KiB messages, 1 QP, depth
# 128, one direction, a fixed duration, over af_packet ports on a veth pair
# between two network namespaces (perftest gives up unless the port is
# ACTIVE when it starts). Each side is one process with one engine lcore
# and the program's own thread, one completion signaled every 16 WRs (-Q
# 16, as uroce-perf); nothing is pinned (perftest pins nothing).
#
#	bench/perf/run.sh [BUILD_DIR] [OUT_DIR]
#
# BUILD_DIR: the build with uroce-perf and uroce-run (default: build);
# OUT_DIR: where the results go (default: BUILD_DIR/bench/perf).
# Environment: PERF_DURATION (seconds per run, default 5), PERF_RUNS (runs
# of each tool, alternating, default 3; the median is reported).
# Prints the table and writes OUT_DIR/write_bw.json (and each tool's
# output of the last run, OUT_DIR/*.log). Root only (namespaces);
# everything it creates carries its PID and is removed at exit.
set -u
here=$(dirname "$(readlink -f "$0")")
build=$(readlink -f "${1:-$here/../../build}")
out=${2:-$build/bench/perf}
perf=$build/app/perf/uroce-perf
run=$build/app/run/uroce-run
dur=${PERF_DURATION:-5}
runs=${PERF_RUNS:-3}
for x in "$perf" "$run"; do
	[ -x "$x" ] || { echo "run.sh: no $x (build first)" >&2; exit 2; }
done
command -v ib_write_bw >/dev/null ||
	{ echo "run.sh: no ib_write_bw (apt-get install perftest)" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || { echo "run.sh: needs root (namespaces)" >&2; exit 2; }

tag=uperf$$
ns_a=$tag-a
ns_b=$tag-b
tmp=$(mktemp -d /tmp/uroce-perfbench.XXXXXX) || exit 1
pids=
cleanup() {
	for pid in $pids; do
		kill -KILL "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	done
	ip netns del "$ns_a" 2>/dev/null
	ip netns del "$ns_b" 2>/dev/null
	rm -rf "$tmp" /var/run/dpdk/"$tag"-*
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# The veth pair; the kernel addresses carry the TCP exchanges, uroce owns
# 192.168.79.x (the kernel must not, or it answers RoCEv2 with ICMP).
ip netns add "$ns_a" && ip netns add "$ns_b" &&
ip -n "$ns_a" link add "${tag}a" address 02:00:00:00:79:01 type veth \
	peer name "${tag}b" netns "$ns_b" address 02:00:00:00:79:02 || exit 1
for s in a b; do
	ip netns exec "$tag-$s" sysctl -qw net.ipv6.conf.all.disable_ipv6=1
	ip -n "$tag-$s" link set lo up
	ip -n "$tag-$s" link set "$tag$s" up
done
ip -n "$ns_a" addr add 10.79.0.1/24 dev "${tag}a"
ip -n "$ns_b" addr add 10.79.0.2/24 dev "${tag}b"

# $1 side, $2 own IP, $3 peer IP, $4 peer MAC
write_conf() {
	cat > "$tmp/$1.conf" <<EOC
[port]
dev  = net_af_packet0,iface=$tag$1,qdisc_bypass=1
ip   = $2/24
mtu  = 1500
[eal]
lcores = 1
args   = --no-pci --no-huge -m 256 --file-prefix=$tag-$1 --log-level=*:warning
[neigh]
$3 = $4
EOC
}
write_conf a 192.168.79.1 192.168.79.2 02:00:00:00:79:02
write_conf b 192.168.79.2 192.168.79.1 02:00:00:00:79:01

# Whether TCP port $1 listens in namespace a.
listening() {
	local hex
	hex=$(printf '%04X' "$1")
	ip netns exec "$ns_a" cat /proc/net/tcp | awk -v p=":$hex" \
		'$2 ~ p"$" && $4 == "0A" { f = 1 } END { exit !f }'
}

# $1 name, $2 TCP port, then the server command; the client command is
# the same with the server's address, read from CLIENT (an array).
# Both bounded; the client's output in $tmp/$1.out.
pair() {
	local name=$1 port=$2 spid cpid rc i
	shift 2
	timeout -s KILL $((dur + 60)) ip netns exec "$ns_a" "$@" \
		>"$tmp/$name.srv" 2>&1 &
	spid=$!
	pids="$pids $spid"
	for i in $(seq 1 200); do
		listening "$port" && break
		sleep 0.05
	done
	timeout -s KILL $((dur + 60)) ip netns exec "$ns_b" "${CLIENT[@]}" \
		>"$tmp/$name.out" 2>&1 &
	cpid=$!
	pids="$pids $cpid"
	wait "$cpid"
	rc=$?
	wait "$spid"
	[ "$rc" -eq 0 ] && [ $? -eq 0 ] && return 0
	echo "run.sh: $name failed (client $rc)" >&2
	cat "$tmp/$name.srv" "$tmp/$name.out" >&2
	return 1
}

# Gbit/s of each run, one a line, in $tmp/{perftest,verbs,native}.gbps.
port=$((21000 + $$ % 9000))
for i in $(seq 1 "$runs"); do
	port=$((port + 1))
	pt=(ib_write_bw -d uroce0 -x 0 -F -s 65536 -q 1 -t 128 -Q 16 -D "$dur"
	    --report_gbits -p "$port")
	CLIENT=("$run" -c "$tmp/b.conf" -- "${pt[@]}" 10.79.0.1)
	pair perftest "$port" "$run" -c "$tmp/a.conf" -- "${pt[@]}" || exit 1
	# perftest's row: bytes, iterations, BW peak, BW average, MsgRate
	awk '$1 == 65536 && NF >= 5 { print $4 }' "$tmp/perftest.out" \
		>>"$tmp/perftest.gbps"
	for mode in verbs native; do
		port=$((port + 1))
		flag=--verbs
		[ "$mode" = native ] && flag=
		# shellcheck disable=SC2206	# flag: zero or one word
		up=(-w write -s 65536 -q 128 --qps 1 -D "$dur" --core -1 -p "$port"
		    --quiet $flag)
		CLIENT=("$perf" -c "$tmp/b.conf" --connect 10.79.0.1 "${up[@]}"
			--json "$tmp/$mode-$i.json")
		pair "$mode" "$port" "$perf" -c "$tmp/a.conf" --server \
			-p "$port" --core -1 $flag || exit 1
		/usr/bin/python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))["results"][0]
print(r["goodput_gbps"], r["raw"]["goodput_gbps"])' "$tmp/$mode-$i.json" \
			>>"$tmp/$mode.gbps"
	done
done

mkdir -p "$out" || exit 1
for f in perftest verbs native; do	# the last run's own output
	cp "$tmp/$f.out" "$out/$f.log"
done
/usr/bin/python3 - "$tmp" "$out/write_bw.json" "$dur" "$(uptime)" <<'EOF'
import json, statistics, sys
tmp, path, dur, load = sys.argv[1:5]
def col(name, i=0):
    return [float(l.split()[i]) for l in open(f"{tmp}/{name}.gbps") if l.strip()]
pt, vb, nt = col("perftest"), col("verbs"), col("native")
raw = col("verbs", 1) + col("native", 1)
med = {k: statistics.median(v) for k, v in
       (("perftest", pt), ("verbs", vb), ("native", nt), ("raw", raw))}
res = {"workload": "RC WRITE 64 KiB, 1 QP, depth 128, af_packet veth pair",
       "duration_s": float(dur), "load": load.strip(),
       "runs_gbps": {"perftest": pt, "verbs": vb, "native": nt, "raw": raw},
       "median_gbps": med,
       "perftest_over_verbs": med["perftest"] / med["verbs"],
       "verbs_over_native": med["verbs"] / med["native"]}
json.dump(res, open(path, "w"), indent=1)
print("ib_write_bw vs uroce-perf --verbs, 64 KiB RC WRITE, 1 QP, depth 128"
      f" ({len(pt)} runs of {dur} s each, median)")
for k, lab in (("perftest", "ib_write_bw (uroce-run)"),
               ("verbs", "uroce-perf --verbs"), ("native", "uroce-perf"),
               ("raw", "raw ceiling (uroce-perf)")):
    print(f"  {lab:28s} {med[k]:8.3f} Gbit/s   runs: "
          + " ".join(f"{x:.3f}" for x in res["runs_gbps"][k]))
print(f"  ib_write_bw / --verbs: {res['perftest_over_verbs']:.3f} "
      "(aim: 0.85 to 1.15)")
print(f"  --verbs / native:      {res['verbs_over_native']:.3f}")
print(f"  {load.strip()}")
EOF
