#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The uroce authors
#
# Two peer processes (peer.c) over memif: the server (memif server side)
# and the client, each with one engine lcore, configs written here.
#
#	run_peer.sh PEER_EXE SCENARIO
#
#	mix    clean link: random opcode mix, then UC and UD
#	fault  faults on both ports (drop 1%, reorder 1%, dup 0.1%, corrupt
#	       0.1%, fixed seeds): byte-exact, retransmits moved
#	gone   the server is killed after the mix: RETRY_EXC_ERR, then
#	       WR_FLUSH_ERR, within the bound (timeout 10, retry_cnt 3)
#	rnr    the server posts its receives only after an RNR NAK
#
# Kills only the processes it started; removes its temp dir (configs,
# memif socket, outputs) and the EAL runtime dirs of its file prefixes.
set -u
peer=$1
scen=$2

case $scen in
mix)	args="--mode mix --seed 1 --ops 20000"; fault_a=; fault_b= ;;
fault)	args="--mode fault --seed 2 --ops 20000"
	fault_a="fault = drop=1%,reorder=1%,dup=0.1%,corrupt=0.1%,seed=11"
	fault_b="fault = drop=1%,reorder=1%,dup=0.1%,corrupt=0.1%,seed=12" ;;
gone)	args="--mode gone --seed 3 --ops 2000 --timeout 10 --retry 3"
	fault_a=; fault_b= ;;
rnr)	args="--mode rnr --seed 4 --ops 5000"; fault_a=; fault_b= ;;
*)	echo "run_peer: unknown scenario $scen" >&2; exit 2 ;;
esac

. "$(dirname "$0")/pair.sh"
pair_init peer
pair_memif_confs "$fault_a" "$fault_b"

# Wait (at most $3 s, while process $4 lives) for a line matching $2 in
# file $1; print it.
wait_line() {
	pair_until "$3" "$4" grep -m1 "$2" "$1" 2>/dev/null
}

show() {
	echo "--- server stdout"; cat "$tmp/server.out"
	echo "--- server stderr"; cat "$tmp/server.err"
	echo "--- client stdout"; cat "$tmp/client.out"
	echo "--- client stderr"; cat "$tmp/client.err"
}

"$peer" --role server --config "$tmp/a.conf" >"$tmp/server.out" \
	2>"$tmp/server.err" &
spid=$!
line=$(wait_line "$tmp/server.out" '^PEER-LISTEN ' 60 "$spid")
if [ -z "$line" ]; then
	echo "run_peer $scen: the server did not start"
	show
	exit 1
fi
port=${line#PEER-LISTEN }

# shellcheck disable=SC2086
"$peer" --role client --config "$tmp/b.conf" --tcp "$port" $args \
	>"$tmp/client.out" 2>"$tmp/client.err" &
cpid=$!

killed=0
if [ "$scen" = gone ]; then
	if wait_line "$tmp/client.out" '^PEER-GONE-READY' 120 "$cpid" \
		>/dev/null; then
		kill -KILL "$spid"
		killed=1
		# Reap it here, where the shell's "Killed" notice goes nowhere.
		wait "$spid" 2>/dev/null
		src=$?
		spid=
	fi
fi
wait "$cpid"
crc=$?
cpid=
if [ -n "$spid" ]; then
	wait "$spid"
	src=$?
	spid=
fi
show
echo "run_peer $scen: client exit $crc, server exit $src"
if [ "$scen" = gone ]; then
	# The server must have died by our SIGKILL (128 + 9).
	[ "$crc" -eq 0 ] && [ "$killed" -eq 1 ] && [ "$src" -eq 137 ]
else
	[ "$crc" -eq 0 ] && [ "$src" -eq 0 ]
fi
