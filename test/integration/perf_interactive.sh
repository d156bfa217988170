#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The uroce authors
#
# uroce-perf -i (in --loop, one process): commands from stdin. Checks that
# each answers, that `start` runs the plan (the table comes) and that QP 0's
# counters moved once it ran, that `set fault` drops frames on a port that
# started without faults (the run still completes: the transport resends)
# and rejects a bad spec naming the item, and that `quit` ends with status 0.
#
#	perf_interactive.sh UROCE_PERF
set -u
perf=$1
. "$(dirname "$0")/pair.sh"
pair_init perf-i
pair_loop_conf "$tmp/loop.conf" pi 79

# The run is short (-n): wait for its table before the last commands.
{
	printf 'show qp 0\nshow qp 7\nset rate 0 0\nshow port stats\n'
	printf 'set fault drop=5\nset fault drop=2%%,seed=9\nstart\n'
	for _ in $(seq 1 300); do
		grep -q 'ratio = uroce' "$tmp/out" 2>/dev/null && break
		sleep 0.1
	done
	printf 'show qp 0\nshow port stats\nset fault none\nstop\nquit\n'
} | "$perf" -c "$tmp/loop.conf" --loop -i --core -1 -w write -s 4096 \
	-n 2000 --quiet >"$tmp/out" 2>&1
rc=$?
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
echo "perf_interactive: $fails failed"
[ "$fails" -eq 0 ]
