#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The uroce authors
#
# Inline progress against native progress and the engine lcore, two
# processes over the sample memif pair (config/memif-{a,b}.conf):
#  - uroce-perf RC WRITE 8 B latency (half round trip, p50 and p99) and
#    RC WRITE 64 KiB goodput, natively (the benchmark's thread runs the
#    stack: the ceiling of this comparison), through the verbs library
#    with [eal] lcores = 0 (inline), and through it with one engine lcore;
#  - uroce-perf RC WRITE 8 B message rate and RC READ 64 KiB goodput, the
#    same three ways;
#  - perftest's ib_write_lat and ib_send_lat under uroce-run (t_typical),
#    inline and with one engine lcore;
#  - perftest's ib_read_bw (BW average): its server never polls while the
#    client READs (it waits on its TCP socket), so inline only the keeper
#    serves the READs;
#  - the CPU a process with nothing to do uses: an ibv_rc_pingpong server
#    on each side, its QP created, waiting for a TCP client that never
#    comes (utime + stime of side A over INLINE_IDLE seconds).
# The modes take turns within each round, RUNS rounds; the summary gives
# each figure's median and min..max over the rounds.
#
#	bench/inline/run.sh [BUILD_DIR] [OUT_DIR]
#
# Environment: INLINE_RUNS (rounds, default 3), INLINE_DURATION (seconds
# of each uroce-perf figure, default 1), INLINE_ITERS (perftest -n,
# default 20000), INLINE_IDLE (seconds of the idle figure, default 5),
# INLINE_MODES (default "native inline lcore").
set -u
here=$(dirname "$(readlink -f "$0")")
src=$(readlink -f "$here/../..")
build=$(readlink -f "${1:-$src/build}")
out=${2:-$build/bench/inline}
perf=$build/app/perf/uroce-perf
run=$build/app/run/uroce-run
runs=${INLINE_RUNS:-3}
dur=${INLINE_DURATION:-1}
iters=${INLINE_ITERS:-20000}
idle=${INLINE_IDLE:-5}
modes=${INLINE_MODES:-native inline lcore}
conf_a=$src/config/memif-a.conf
conf_b=$src/config/memif-b.conf
for x in "$perf" "$run"; do
	[ -x "$x" ] || { echo "run.sh: no $x (build first)" >&2; exit 2; }
done
mkdir -p "$out" || exit 1
pids=
cleanup() {
	for pid in $pids; do
		kill -KILL "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	done
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# The mode's environment and uroce-perf option.
mode_env() {
	case $1 in
	native) echo "UROCE_EAL_LCORES=1" ;;
	inline) echo "UROCE_EAL_LCORES=0" ;;
	lcore) echo "UROCE_EAL_LCORES=1" ;;
	esac
}
mode_opt() { [ "$1" = native ] || echo --verbs; }

# perf MODE NAME ARGS...: one uroce-perf pair, the client's JSON kept.
perf_pair() {
	local mode=$1 name=$2; shift 2
	env $(mode_env "$mode") "$perf" -c "$conf_a" --server $(mode_opt "$mode") \
		>"$out/$name.server.log" 2>&1 &
	local spid=$!
	pids="$spid"
	sleep 1
	env $(mode_env "$mode") "$perf" -c "$conf_b" --connect 127.0.0.1 \
		$(mode_opt "$mode") --quiet --no-raw --rounds 1 -D "$dur" \
		--json "$out/$name.json" "$@" >"$out/$name.log" 2>&1
	wait "$spid"
	pids=
}

# refused LOG: the perftest client found no server listening yet (a slow
# start on a loaded host); it is run again, the server still waiting.
refused() { grep -q "Couldn't connect" "$1"; }

# perftest MODE TOOL NAME: one pair under uroce-run.
perftest_pair() {
	local mode=$1 tool=$2 name=$3
	env $(mode_env "$mode") "$run" -c "$conf_a" -- "$tool" -d uroce0 -x 0 \
		-n "$iters" >"$out/$name.server.log" 2>&1 &
	local spid=$!
	pids="$spid"
	for try in 1 2 3 4 5; do
		sleep 1.5
		env $(mode_env "$mode") "$run" -c "$conf_b" -- "$tool" -d uroce0 \
			-x 0 -n "$iters" 127.0.0.1 >"$out/$name.log" 2>&1
		refused "$out/$name.log" || break
	done
	wait "$spid"
	pids=
}

# read_bw MODE NAME: perftest's ib_read_bw pair, 64 KiB for 2 s.
read_bw_pair() {
	local mode=$1 name=$2
	env $(mode_env "$mode") "$run" -c "$conf_a" -- ib_read_bw -d uroce0 \
		-x 0 -s 65536 -D 2 --report_gbits >"$out/$name.server.log" 2>&1 &
	local spid=$!
	pids="$spid"
	for try in 1 2 3 4 5; do
		sleep 1.5
		env $(mode_env "$mode") "$run" -c "$conf_b" -- ib_read_bw \
			-d uroce0 -x 0 -s 65536 -D 2 --report_gbits 127.0.0.1 \
			>"$out/$name.log" 2>&1
		refused "$out/$name.log" || break
	done
	wait "$spid"
	pids=
}

# cpu_ticks PID: utime + stime of every thread of PID, in clock ticks.
cpu_ticks() {
	awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "/proc/$1/stat"
}

# idle_pair MODE NAME: the CPU share (% of one core) side A's idle
# ibv_rc_pingpong server uses over $idle seconds, link up, QP created.
idle_pair() {
	local mode=$1 name=$2 a b t0 t1
	env $(mode_env "$mode") "$run" -c "$conf_a" -- ibv_rc_pingpong -g 0 \
		-d uroce0 -p 18515 >"$out/$name.server.log" 2>&1 &
	a=$!
	env $(mode_env "$mode") "$run" -c "$conf_b" -- ibv_rc_pingpong -g 0 \
		-d uroce0 -p 18516 >"$out/$name.peer.log" 2>&1 &
	b=$!
	pids="$a $b"
	sleep 3
	t0=$(cpu_ticks "$a")
	sleep "$idle"
	t1=$(cpu_ticks "$a")
	echo "$t0 $t1 $idle $(getconf CLK_TCK)" | awk '{ printf "%.3f\n",
		100 * ($2 - $1) / $4 / $3 }' >"$out/$name.txt"
	cleanup
	pids=
}

for r in $(seq 1 "$runs"); do
	for m in $modes; do
		perf_pair "$m" "lat-$m-$r" -w write -m lat
		perf_pair "$m" "bw-$m-$r" -w write -m bw -s 64K
		perf_pair "$m" "rate-$m-$r" -w write -m rate -s 8
		perf_pair "$m" "read-$m-$r" -w read -m bw -s 64K
		if [ "$m" != native ] && command -v ib_write_lat >/dev/null; then
			perftest_pair "$m" ib_write_lat "write_lat-$m-$r"
			perftest_pair "$m" ib_send_lat "send_lat-$m-$r"
			read_bw_pair "$m" "read_bw-$m-$r"
		fi
		if [ "$m" != native ] && command -v ibv_rc_pingpong >/dev/null
		then
			idle_pair "$m" "idle-$m-$r"
		fi
	done
done
python3 "$here/summary.py" "$out" "$runs" $modes
