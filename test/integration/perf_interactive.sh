#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The uroce authors
#
# uroce-perf -i: commands from stdin. Checks that each answers, that
# `start` runs the plan (the table comes) and that QP 0's counters moved
# once it ran, that `set fault` drops frames on a port that started
# without faults (the run still completes: the transport resends) and
# rejects a bad spec naming the item, and that `quit` ends with status 0.
#
#	perf_interactive.sh UROCE_PERF            --loop, one process
#	perf_interactive.sh UROCE_PERF --verbs    the client through the verbs
#	                                          library, a native server,
#	                                          over a memif pair
set -u
perf=$1
verbs=${2:-}
. "$(dirname "$0")/pair.sh"
pair_init perf-i

if [ -n "$verbs" ]; then
	port=$((20000 + $$ % 20000))
	pair_memif_confs
	"$perf" -c "$tmp/a.conf" --server -p "$port" --core -1 \
		>"$tmp/server.out" 2>&1 &
	spid=$!
	pair_wait_server
	set -- -c "$tmp/b.conf" --connect 127.0.0.1 -p "$port" --verbs
else
	pair_loop_conf "$tmp/loop.conf" pi 79
	set -- -c "$tmp/loop.conf" --loop
fi

# The run is short (-n): wait for its table before the last commands.
{
	printf 'show qp 0\nshow qp 7\nset rate 0 0\nshow port stats\n'
	printf 'set fault drop=5\nset fault drop=2%%,seed=9\nstart\n'
	for _ in $(seq 1 300); do
		grep -q 'ratio = uroce' "$tmp/out" 2>/dev/null && break
		sleep 0.1
	done
	printf 'show qp 0\nshow port stats\nset fault none\nstop\nquit\n'
} | "$perf" "$@" -i --core -1 -w write -s 4096 -n 2000 --quiet \
	>"$tmp/out" 2>&1
rc=$?
if [ -n "$spid" ]; then
	wait "$spid"
	src=$?
	spid=
	[ "$src" -eq 0 ] || { echo "--- server"; cat "$tmp/server.out"; }
else
	src=0
fi
cat "$tmp/out"
fails=0
check() {
	if ! grep -q -- "$1" "$tmp/out"; then
		echo "FAIL: no '$1' in the output"
		fails=$((fails + 1))
	fi
}
check 'tx 0 pkts'			# QP 0 before start
check 'no QP 7: 0..0'
check 'QP 0 rate 0 kbit/s: set'
check 'uroce0: rx'
check 'ratio = uroce'			# start ran the plan
check 'tx [1-9][0-9]* pkts'		# QP 0 after the run
check 'set fault drop=5: drop=5: not a probability'
check 'faults drop 20000 reorder 0 dup 0 corrupt 0 ppm, seed 9'
check 'faults: drop [1-9]'		# the run met them
check 'retransmits [1-9]'		# and recovered
check 'uroce0: no faults'
check 'stopped'
[ "$rc" -eq 0 ] || { echo "FAIL: exit $rc"; fails=$((fails + 1)); }
[ "$src" -eq 0 ] || { echo "FAIL: server exit $src"; fails=$((fails + 1)); }
echo "perf_interactive${verbs:+ $verbs}: $fails failed"
[ "$fails" -eq 0 ]
