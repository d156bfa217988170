#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The uroce authors
#
# The pacing benchmark over the memif pair (issue 6): two uroce-pace-perf
# processes, each one busy thread pinned to its own core.
#
#	bench/pace/run.sh [BUILD_DIR] [OUT_DIR]      (defaults: build, bench/pace/results)
#
#  1. suite "full": the unpaced ceiling, one stream at 10 Mbit/s .. 10 Gbit/s
#     and 90% of the ceiling, 1 .. 10,000 QPs at 80% of the ceiling
#     -> OUT_DIR/pace.json, the table on stdout;
#  2. a captured run (the client port's [port] pcap): 4 QPs at
#     PCAP_RATE kbit/s each with max_burst_sz PCAP_BURST, and burst.py
#     -> OUT_DIR/burst.json;
#  3. gnuplot: target vs achieved, log-log -> OUT_DIR/pace.png.
# Environment: PACE_WINDOWS (default 4, the first discarded), PACE_WINDOW
# (1 s), PCAP_RATE (200000), PCAP_BURST (16384), PACE_MODE=tiny (the
# integration test: one short low-rate "one" run with --check, no capture,
# no plot). Creates its own sockets and file prefixes (with its PID) in a
# temp dir and removes them, and the EAL runtime dirs, at exit.
set -u
here=$(dirname "$(readlink -f "$0")")
build=${1:-$here/../../build}
out=${2:-$here/results}
exe=$build/bench/pace/uroce-pace-perf
[ -x "$exe" ] || { echo "run.sh: no $exe (build first)" >&2; exit 2; }
windows=${PACE_WINDOWS:-4}
window=${PACE_WINDOW:-1}
pcap_rate=${PCAP_RATE:-200000}
pcap_burst=${PCAP_BURST:-16384}
mode=${PACE_MODE:-full}
ncpu=$(nproc)
# Pinned to different cores when there are two; a 1-CPU box shares one.
core_a=0
core_b=$((ncpu > 1 ? 1 : 0))

tmp=$(mktemp -d /tmp/uroce-pbench.XXXXXX) || exit 1
prefix=uroce-pbench-$$
spid=
cpid=
cleanup() {
	for pid in $cpid $spid; do
		kill -KILL "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	done
	rm -rf "$tmp" "/var/run/dpdk/$prefix-a" "/var/run/dpdk/$prefix-b"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# $1 side, $2 role, $3 own IP, $4 peer IP, $5 own MAC, $6 peer MAC,
# $7 core, $8 extra [port] line
write_conf() {
	cat > "$tmp/$1.conf" <<EOC
[port]
dev  = net_memif0,role=$2,id=0,socket=$tmp/memif.sock,socket-abstract=no,mac=$5
ip   = $3/24
mtu  = 4096
$8
[eal]
lcores = 1
args   = --no-huge -m 1024 -l $7 --file-prefix=$prefix-$1 --log-level=*:warning
[neigh]
$4 = $6
EOC
}

# run NAME CLIENT_ARGS...: one server/client pair; client stdout to NAME.out
run_pair() {
	local name=$1 line port i
	shift
	"$exe" --role server --config "$tmp/a.conf" >"$tmp/server.out" \
		2>"$tmp/server.err" &
	spid=$!
	port=
	for i in $(seq 1 600); do
		line=$(grep -m1 '^PACE-LISTEN ' "$tmp/server.out" 2>/dev/null)
		[ -n "$line" ] && { port=${line#PACE-LISTEN }; break; }
		kill -0 "$spid" 2>/dev/null || break
		sleep 0.1
	done
	if [ -z "$port" ]; then
		echo "run.sh: the server did not start" >&2
		cat "$tmp/server.out" "$tmp/server.err" >&2
		return 1
	fi
	"$exe" --role client --config "$tmp/b.conf" --tcp "$port" "$@" \
		2>"$tmp/client.err" | tee "$tmp/$name.out"
	crc=${PIPESTATUS[0]}
	wait "$spid"
	src=$?
	spid=
	if [ "$crc" -ne 0 ] || [ "$src" -ne 0 ]; then
		echo "run.sh: $name: client exit $crc, server exit $src" >&2
		cat "$tmp/client.err" "$tmp/server.err" >&2
		return 1
	fi
	return 0
}

confs() {
	write_conf a server 192.168.77.1 192.168.77.2 02:00:00:00:77:01 \
		02:00:00:00:77:02 "$core_a" ""
	write_conf b client 192.168.77.2 192.168.77.1 02:00:00:00:77:02 \
		02:00:00:00:77:01 "$core_b" "$1"
}

if [ "$mode" = tiny ]; then
	confs ""
	run_pair tiny --suite one --qps 3 --rate 20000 --window 0.2 \
		--windows 2 --msg 16384 --check
	exit $?
fi

mkdir -p "$out"
confs ""
echo "== uroce-pace-perf: $(date -u +%F), $ncpu CPUs, server on core" \
	"$core_a, client on core $core_b; windows of ${window} s, $windows" \
	"per scenario (the first discarded)"
status=0
run_pair full --suite full --windows "$windows" --window "$window" \
	--json "$out/pace.json" || status=1
[ -s "$out/pace.json" ] || exit 1

echo
echo "== captured run: 4 QPs x $pcap_rate kbit/s, max_burst_sz $pcap_burst"
confs "pcap = $tmp/client.pcapng"
run_pair pcap --suite one --qps 4 --rate "$pcap_rate" --burst "$pcap_burst" \
	--windows 3 --window "$window" || status=1
/usr/bin/python3 "$here/burst.py" "$tmp/client.pcapng" "$pcap_rate" \
	"$pcap_burst" "$out/burst.json" || status=1

if command -v gnuplot >/dev/null; then
	/usr/bin/python3 "$here/plot_data.py" "$out/pace.json" "$tmp/plot.dat" &&
	gnuplot -e "datafile='$tmp/plot.dat'; outfile='$out/pace.png'" \
		"$here/pace.gp" && echo "plot: $out/pace.png"
else
	echo "run.sh: no gnuplot: no plot"
fi
exit $status
