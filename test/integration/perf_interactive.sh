#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The uroce authors
#
# uroce-perf -i (in --loop, one process): commands from stdin. Checks that
# each answers, that `start` runs the plan (the table comes) and that QP 0's
# counters moved once it ran, and that `quit` ends with status 0.
#
#	perf_interactive.sh UROCE_PERF
set -u
perf=$1
tmp=$(mktemp -d /tmp/uroce-perf-i.XXXXXX) || exit 1
prefix=uroce-perf-i$$
trap 'rm -rf "$tmp" "/var/run/dpdk/$prefix"' EXIT
mem=${UROCE_TEST_MEM:---no-huge -m 256}
case $mem in *--in-memory*) mem="--no-huge -m 256" ;; esac

cat > "$tmp/loop.conf" <<EOC
[port0]
dev  = ringlink:pi,side=0
ip   = 192.168.79.1/24
mtu  = 4096
[port1]
dev  = ringlink:pi,side=1
ip   = 192.168.79.2/24
mtu  = 4096
[eal]
lcores = 1
args   = $mem --file-prefix=$prefix --log-level=*:warning
EOC

# The run is short (-n): wait for its table before the last commands.
{
	printf 'show qp 0\nshow qp 7\nset rate 0 0\nshow port stats\nstart\n'
	for _ in $(seq 1 300); do
		grep -q 'ratio = uroce' "$tmp/out" 2>/dev/null && break
		sleep 0.1
	done
	printf 'show qp 0\nstop\nquit\n'
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
check 'stopped'
[ "$rc" -eq 0 ] || { echo "FAIL: exit $rc"; fails=$((fails + 1)); }
echo "perf_interactive: $fails failed"
[ "$fails" -eq 0 ]
