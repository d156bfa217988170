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
# Unique memif socket path and EAL file prefixes (never colliding with
# another run); removes them, and kills only the processes it started.
set -u
perf=$1
check=$2
shift 2

tmp=$(mktemp -d /tmp/uroce-perf-test.XXXXXX) || exit 1
prefix=uroce-perf-t$$
spid=
cpid=
# A TCP port of its own: from the PID, in a range nothing else here uses.
port=$((20000 + $$ % 20000))

cleanup() {
	for pid in $cpid $spid; do
		kill -KILL "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	done
	rm -rf "$tmp" "/var/run/dpdk/$prefix-a" "/var/run/dpdk/$prefix-b"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

mem=${UROCE_TEST_MEM:---no-huge -m 256}
case $mem in *--in-memory*) mem="--no-huge -m 256" ;; esac	# see memif-a.conf

# $1 side, $2 role, $3 own IP, $4 peer IP, $5 own MAC, $6 peer MAC
write_conf() {
	cat > "$tmp/$1.conf" <<EOC
[port]
dev  = net_memif0,role=$2,id=0,socket=$tmp/memif.sock,socket-abstract=no,mac=$5
ip   = $3/24
mtu  = 4096
[eal]
lcores = 1
args   = $mem --file-prefix=$prefix-$1 --log-level=*:warning
[neigh]
$4 = $6
EOC
}
write_conf a server 192.168.77.1 192.168.77.2 02:00:00:00:77:01 \
	02:00:00:00:77:02
write_conf b client 192.168.77.2 192.168.77.1 02:00:00:00:77:02 \
	02:00:00:00:77:01

# --loop: one process, two ports joined by a ringlink, one busy thread
# (ring names are private to the process: its EAL shares no memory).
if [ "${1:-}" = --loop ]; then
	cat > "$tmp/loop.conf" <<EOC
[port0]
dev  = ringlink:pt,side=0
ip   = 192.168.78.1/24
mtu  = 4096
[port1]
dev  = ringlink:pt,side=1
ip   = 192.168.78.2/24
mtu  = 4096
[eal]
lcores = 1
args   = $mem --file-prefix=$prefix-a --log-level=*:warning
EOC
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

show() {
	echo "--- server"; cat "$tmp/server.out"
	echo "--- client"; cat "$tmp/client.out"
}

# shellcheck disable=SC2086	# PERF_SERVER_OPTS: words
${PERF_SERVER_WRAP:-} "$perf" -c "$tmp/a.conf" --server -p "$port" --core -1 \
	${PERF_SERVER_OPTS:-} >"$tmp/server.out" 2>&1 &
spid=$!
for _ in $(seq 1 100); do
	grep -q 'server on TCP port' "$tmp/server.out" && break
	kill -0 "$spid" 2>/dev/null || break
	sleep 0.1
done
${PERF_CLIENT_WRAP:-} "$perf" -c "$tmp/b.conf" --connect 127.0.0.1 -p "$port" --core -1 \
	--json "$tmp/out.json" "$@" >"$tmp/client.out" 2>&1 &
cpid=$!
wait "$cpid"
crc=$?
cpid=
wait "$spid"
src=$?
spid=
show
echo "run_perf: client exit $crc, server exit $src"
[ "$crc" -eq 0 ] && [ "$src" -eq 0 ] || exit 1
case " ${PERF_SERVER_OPTS:-} " in
*" --verbs "*) grep -q 'server on TCP port.*(verbs)' "$tmp/server.out" ||
	{ echo "run_perf: the server did not use the verbs backend"; exit 1; } ;;
esac
cat "$tmp/out.json"
/usr/bin/python3 "$check" "$tmp/out.json" "$@"
