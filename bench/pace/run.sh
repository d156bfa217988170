#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The uroce authors
#
# Pacing accuracy over the memif pair: uroce-perf between two processes,
# each one busy thread pinned to its own core, RC WRITE streams of 64 KiB
# messages, the frame bytes each QP and the port send measured in windows
# against the rates set (uroce-perf --window, app/perf/pace.c).
#
#	bench/pace/run.sh [BUILD_DIR] [OUT_DIR]
#
# BUILD_DIR: the build with app/perf/uroce-perf (default: build);
# OUT_DIR: where the results go (default: BUILD_DIR/bench/pace).
#  1. one stream at 10 Mbit/s .. 10 Gbit/s and at 90% of the unpaced
#     ceiling, 1 .. 10,000 QPs whose rates (1:2:3:4 round robin) sum to 80%
#     of it. Each scenario runs PACE_REPEAT times, the runs interleaved,
#     and the median run is reported. A run near the ceiling takes its
#     target from an unpaced one-stream run right before it, and is run
#     again when the ceiling measured right after it differs from that by
#     more than PACE_MOVED percent (uroce-perf's --moved rule).
#     -> OUT_DIR/pace.json, the table on stdout (summary.py), each run's
#     uroce-perf JSON (every QP's achieved/target) in OUT_DIR/runs/NAME.json;
#  2. a captured run (the client port's [port] pcap): 4 QPs at PCAP_RATE
#     kbit/s each with max_burst_sz PCAP_BURST, the largest burst of each
#     QP against it (burst.py) -> OUT_DIR/burst.json;
#  3. gnuplot: target vs achieved, log-log -> OUT_DIR/pace.png.
# Environment: PACE_WINDOWS (windows per run, the first discarded; 4),
# PACE_WINDOW (seconds; 1), PACE_REPEAT (3), PACE_MOVED (15), PCAP_RATE
# (200000), PCAP_BURST (16384), PACE_MODE: full (the default), tiny (one
# run of 3 QPs at 20 Mbit/s in 0.2 s windows, its JSON checked by
# summary.py --check -> OUT_DIR/tiny.json; the integration test), burst
# (step 2 only). Its memif socket and EAL file prefixes carry its PID, in
# a temporary folder removed at exit with the EAL runtime folders.
set -u
here=$(dirname "$(readlink -f "$0")")
build=$(readlink -f "${1:-$here/../../build}")
out=${2:-$build/bench/pace}
exe=$build/app/perf/uroce-perf
[ -x "$exe" ] || { echo "run.sh: no $exe (build first)" >&2; exit 2; }
windows=${PACE_WINDOWS:-4}
window=${PACE_WINDOW:-1}
pcap_rate=${PCAP_RATE:-200000}
pcap_burst=${PCAP_BURST:-16384}
mode=${PACE_MODE:-full}
repeat=${PACE_REPEAT:-3}
moved=${PACE_MOVED:-15}
ncpu=$(nproc)
# Pinned to different cores when there are two; a 1-CPU box shares one.
core_a=0
core_b=$((ncpu > 1 ? 1 : 0))
port=$((20000 + $$ % 20000))
py=/usr/bin/python3

tmp=$(mktemp -d /tmp/uroce-pbench.XXXXXX) || exit 1
prefix=uroce-pbench-$$
spid=
cleanup() {
	if [ -n "$spid" ]; then
		kill -KILL "$spid" 2>/dev/null
		wait "$spid" 2>/dev/null
	fi
	rm -rf "$tmp" "/var/run/dpdk/$prefix-a" "/var/run/dpdk/$prefix-b"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# $1 side, $2 role, $3 own IP, $4 peer IP, $5 own MAC, $6 peer MAC,
# $7 extra [port] line
write_conf() {
	cat > "$tmp/$1.conf" <<EOC
[port]
dev  = net_memif0,role=$2,id=0,socket=$tmp/memif.sock,socket-abstract=no,mac=$5
ip   = $3/24
mtu  = 4096
link_wait = 0
$7
[eal]
lcores = 1
args   = --no-huge -m 1024 --file-prefix=$prefix-$1 --log-level=*:warning
[neigh]
$4 = $6
EOC
}

confs() {
	write_conf a server 192.168.77.1 192.168.77.2 02:00:00:00:77:01 \
		02:00:00:00:77:02 ""
	write_conf b client 192.168.77.2 192.168.77.1 02:00:00:00:77:02 \
		02:00:00:00:77:01 "$1"
}

# run NAME QPS SECONDS uroce-perf-client-options...: one server/client
# pair, the client's JSON to $runs/NAME.json. Depth: 128 messages in
# flight over the QPs (perftest's default tx depth), at least 2 per QP:
# with fewer (32, 2 MiB) a stream goes idle while the receiver stalls.
run_pair() {
	local name=$1 nqp=$2 secs=$3 depth crc src i
	shift 3
	depth=$((128 / nqp))
	[ "$depth" -lt 2 ] && depth=2
	rm -f "$tmp/server.out"	# the wait below must not read the last one's
	"$exe" -c "$tmp/a.conf" --server -p "$port" --core "$core_a" --quiet \
		>"$tmp/server.out" 2>&1 &
	spid=$!
	# The client may start once the server's memif socket is there.
	for i in $(seq 1 300); do
		grep -q '^uroce-perf: server on' "$tmp/server.out" && break
		kill -0 "$spid" 2>/dev/null || break
		sleep 0.1
	done
	"$exe" -c "$tmp/b.conf" --connect 127.0.0.1 -p "$port" \
		--core "$core_b" --quiet --no-raw -w write -s 64K -q "$depth" \
		--qps "$nqp" -D "$secs" --window "$window" \
		--json "$runs/$name.json" "$@" >"$tmp/client.out" 2>&1
	crc=$?
	[ "$crc" -ne 0 ] && kill -KILL "$spid" 2>/dev/null
	wait "$spid"
	src=$?
	spid=
	grep '^pacing' "$tmp/client.out" | sed "s/^/$name: /"
	if [ "$crc" -ne 0 ] || [ "$src" -ne 0 ]; then
		echo "run.sh: $name: client exit $crc, server exit $src" >&2
		cat "$tmp/client.out" "$tmp/server.out" >&2
		return 1
	fi
	return 0
}

secs=$($py -c "print($windows * $window)")

if [ "$mode" = tiny ]; then
	runs=$out
	mkdir -p "$runs" || exit 1
	confs ""
	window=0.2
	run_pair tiny 3 0.6 --rate 20000 -s 16K &&
	$py "$here/summary.py" --check "$runs/tiny.json"
	exit $?
fi

runs=$out/runs
mkdir -p "$runs" || exit 1
status=0
[ "$mode" = burst ] && only_burst=1 || only_burst=0
if [ "$only_burst" = 0 ]; then
rm -f "$runs"/*.json
confs ""
echo "== uroce-perf pacing: $ncpu CPUs, server on core" \
	"$core_a, client on core $core_b; windows of ${window} s, $windows" \
	"per scenario (the first discarded)"
# The unpaced ceiling moves by up to 15% from one run to the next on a
# 2-vCPU VM, and by more within minutes when other load comes and goes. So
# each run near the ceiling has its own: an unpaced run right before it
# (ceiling-NAME), its target taken from that, and one right after it
# (after-NAME), which must agree within PACE_MOVED percent for the run to
# count.
kbps() {
	$py -c 'import json,sys; print(int(json.load(open(sys.argv[1]))["pace"]["achieved_bps"] / 1000))' "$runs/$1.json"
}

# near NAME QPS PERCENT: the ceiling, then NAME at PERCENT of it (one
# stream at --rate, several at --rate-total), then the ceiling again
# (after-NAME). A target is PERCENT of the link the run had only if the
# link's speed held through it: when the two ceilings differ by more than
# PACE_MOVED percent (the host changed speed meanwhile; the run said
# nothing about the pacer), the three are kept as movedK-* (summary.py
# lists them) and the scenario runs again, at most twice; the last try
# stands whatever its ceilings.
near() {
	local name=$1 nqp=$2 pct=$3 c c2 d opt try f
	[ "$nqp" = 1 ] && opt=--rate || opt=--rate-total
	for try in 1 2 3; do
		run_pair "ceiling-$name" 1 "$secs" || return 1
		c=$(kbps "ceiling-$name") || return 1
		run_pair "$name" "$nqp" "$secs" "$opt" $((c * pct / 100)) ||
			return 1
		run_pair "after-$name" 1 "$secs" || return 1
		c2=$(kbps "after-$name") || return 1
		d=$((c2 > c ? c2 - c : c - c2))
		[ $((d * 100)) -le $((c * moved)) ] && return 0
		[ "$try" = 3 ] && return 0
		echo "$name: the ceiling moved from $c to $c2 kbit/s: again"
		for f in "ceiling-$name" "$name" "after-$name"; do
			mv "$runs/$f.json" "$runs/moved$try-$f.json"
		done
	done
}

# Every scenario PACE_REPEAT times (NAME, NAME-2, ...), interleaved so
# that a slow spell of the machine hits one run of each rather than every
# run of one; summary.py reports the median run. A host stall of a few
# milliseconds costs a 1 s window about that share of its rate.
for k in $(seq 1 "$repeat"); do
	sfx=$([ "$k" = 1 ] || echo "-$k")
	for r in 10000 100000 1000000 5000000 10000000; do
		run_pair "1x$r$sfx" 1 "$secs" --rate "$r" || status=1
	done
	near "1x90pct$sfx" 1 90 || status=1
	for n in 1 100 1000 10000; do
		near "${n}x80pct$sfx" "$n" 80 || status=1
	done
done
$py "$here/summary.py" "$out/pace.json" "$runs"/*.json || status=1
fi

echo
echo "== captured run: 4 QPs x $pcap_rate kbit/s, max_burst_sz $pcap_burst"
confs "pcap = $tmp/client.pcapng"
run_pair pcap 4 "$secs" --rate "$pcap_rate" --burst "$pcap_burst" || status=1
$py "$here/burst.py" "$tmp/client.pcapng" "$pcap_rate" "$pcap_burst" \
	"$out/burst.json" || status=1
[ "$only_burst" = 1 ] && exit $status

if command -v gnuplot >/dev/null; then
	$py "$here/plot_data.py" "$out/pace.json" "$tmp/plot.dat" &&
	gnuplot -e "datafile='$tmp/plot.dat'; outfile='$out/pace.png'" \
		"$here/pace.gp" && echo "plot: $out/pace.png"
else
	echo "run.sh: no gnuplot: no plot"
fi
exit $status
