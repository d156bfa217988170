#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The uroce authors
#
# uroce-perf between two processes over memif, a short run with a fixed
# number of iterations, and checks on its JSON (check_perf_json.py):
# messages completed, bytes = messages x size, no errors, raw ceiling and
# ratio present. No timing threshold: the figures only have to be sane.
#
#	run_perf.sh UROCE_PERF CHECKER [uroce-perf client options...]
#	run_perf.sh UROCE_PERF CHECKER --loop [options...]   (one process)
#
# PERF_SERVER_OPTS: the server's own options (--verbs: the verbs backend;
# its first line must then say so).
#
# Unique memif socket path and EAL file prefixes (pair.sh: never colliding
# with another run); removes them, and kills only the processes it started.
set -u
perf=$1
check=$2
shift 2

. "$(dirname "$0")/pair.sh"
pair_init perf-test
# A TCP port of its own: from the PID, in a range nothing else here uses.
port=$((20000 + $$ % 20000))
pair_memif_confs

# --loop: one process, two ports joined by a ringlink, one busy thread.
if [ "${1:-}" = --loop ]; then
	pair_loop_conf "$tmp/loop.conf" pt 78
	"$perf" -c "$tmp/loop.conf" --core -1 --json "$tmp/out.json" "$@" \
		>"$tmp/client.out" 2>&1
	crc=$?
	cat "$tmp/client.out"
	echo "run_perf: --loop exit $crc"
	[ "$crc" -eq 0 ] || exit 1
	cat "$tmp/out.json"
	/usr/bin/python3 "$check" "$tmp/out.json" "$@"
	exit $?	# (not exec: the EXIT trap cleans up)
fi

# shellcheck disable=SC2086	# PERF_SERVER_OPTS: words
${PERF_SERVER_WRAP:-} "$perf" -c "$tmp/a.conf" --server -p "$port" --core -1 \
	${PERF_SERVER_OPTS:-} >"$tmp/server.out" 2>&1 &
spid=$!
pair_wait_server
${PERF_CLIENT_WRAP:-} "$perf" -c "$tmp/b.conf" --connect 127.0.0.1 -p "$port" --core -1 \
	--json "$tmp/out.json" "$@" >"$tmp/client.out" 2>&1 &
cpid=$!
wait "$cpid"
crc=$?
cpid=
wait "$spid"
src=$?
spid=
pair_show
echo "run_perf: client exit $crc, server exit $src"
[ "$crc" -eq 0 ] && [ "$src" -eq 0 ] || exit 1
case " ${PERF_SERVER_OPTS:-} " in
*" --verbs "*) grep -q 'server on TCP port.*(verbs)' "$tmp/server.out" ||
	{ echo "run_perf: the server did not use the verbs backend"; exit 1; } ;;
esac
cat "$tmp/out.json"
/usr/bin/python3 "$check" "$tmp/out.json" "$@"
