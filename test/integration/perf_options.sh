#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The uroce authors
#
# uroce-perf's bad command lines: each gives exactly one line on stderr,
# nothing on stdout, and exit status 2, before anything starts.
#
#	perf_options.sh UROCE_PERF
set -u
perf=$1
fails=0

# $1 what the line must contain; the rest: the arguments
bad() {
	local want=$1 out err rc
	shift
	out=$("$perf" "$@" 2>/tmp/perf-opt-err.$$)
	rc=$?
	err=$(cat /tmp/perf-opt-err.$$)
	rm -f /tmp/perf-opt-err.$$
	if [ "$rc" -ne 2 ] || [ -n "$out" ] || [ "$(printf '%s\n' "$err" | wc -l)" -ne 1 ] ||
	   [[ "$err" != *"$want"* ]]; then
		echo "FAIL: uroce-perf $*: exit $rc, stderr '$err', stdout '$out'"
		fails=$((fails + 1))
	else
		echo "ok: uroce-perf $*: $err"
	fi
}

c="-c /nonexistent.conf"
bad "--size" $c --server -s abc
bad "--size" $c --server -s 0
bad "--size" $c --server -s 9M
bad "--depth" $c --server -q 0
bad "--qps" $c --server --qps 10001
bad "--duration" $c --server -D -1
bad "--duration/--iters" $c --server -D 1 -n 5
bad "--workload" $c --server -w foo
bad "--mode" $c --server -m bw,foo
bad "--port" $c --server -p 70000
bad "--core" $c --server --core x
bad "--server/--connect" $c
bad "--server/--connect" $c --server --connect 127.0.0.1
bad "--config" --server
bad "--raw/--no-raw" $c --server --raw --no-raw
bad "--loop" $c --loop --server
bad "-i" $c --server -i
bad "unknown option" $c --server --bogus
bad "unexpected" $c --server extra
bad "--core" $c --server --core 1023
bad "--rounds" $c --server --rounds 0
bad "--rounds" $c --server --rounds 26
bad "--moved" $c --server --moved 0
bad "--moved" $c --server --moved x
bad "--window/--rounds" $c --server --window 0.2 --rounds 2
# --help: the usage on stdout, status 0
"$perf" --help | grep -q -- "--connect ADDR" || { echo "FAIL: --help"; fails=$((fails + 1)); }
echo "perf_options: $fails failed"
[ "$fails" -eq 0 ]
