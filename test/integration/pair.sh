# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The uroce authors
#
# Sourced by the scripts that run uroce processes in pairs (run_perf.sh,
# run_peer.sh, perf_interactive.sh): a temp dir and EAL file prefix of the
# run's own, the two processes killed and everything removed at exit, and
# the configs of a memif pair or a ringlink loop.
#
#	. "$(dirname "$0")/pair.sh"; pair_init NAME
#
# After pair_init: $tmp (configs, sockets, outputs), $prefix (EAL file
# prefixes start with it), $mem (EAL memory options). Set $spid/$cpid to
# the server's/client's PID while they run, and clear them once reaped, so
# that the exit never kills a PID that was reused.

pair_cleanup() {
	local pid
	for pid in ${cpid:-} ${spid:-}; do
		kill -KILL "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	done
	rm -rf "$tmp" /var/run/dpdk/"$prefix"-*
}

pair_init() {
	tmp=$(mktemp -d "/tmp/uroce-$1.XXXXXX") || exit 1
	prefix=uroce-$1-$$
	spid=
	cpid=
	trap pair_cleanup EXIT
	trap 'exit 1' INT TERM
	mem=${UROCE_TEST_MEM:---no-huge -m 256}
	# A memif server started --in-memory crashes its client (memif-a.conf).
	case $mem in *--in-memory*) mem="--no-huge -m 256" ;; esac
}

# pair_until SECS PID COMMAND...: run COMMAND every 0.1 s until it
# succeeds (0), for at most SECS s while process PID lives (1 otherwise).
pair_until() {
	local secs=$1 pid=$2
	shift 2
	for _ in $(seq 1 $((secs * 10))); do
		"$@" && return 0
		kill -0 "$pid" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

# Wait (up to 10 s) for the uroce-perf server $spid to say it listens in
# $tmp/server.out; returns at once if it died.
pair_wait_server() {
	pair_until 10 "$spid" grep -q 'server on TCP port' "$tmp/server.out"
}

# A uroce-perf pair's outputs, $tmp/server.out and $tmp/client.out.
pair_show() {
	echo "--- server"; cat "$tmp/server.out"
	echo "--- client"; cat "$tmp/client.out"
}

# The memif pair's two configs, $tmp/a.conf (server, 192.168.77.1) and
# $tmp/b.conf (client, .2), on a socket in $tmp. $1, $2: extra [port] lines
# for a and b (e.g. a fault). No bsize on purpose: pmd_glue gives memif
# buffers that hold a whole frame (glue.c, probe_memif), which the 4096-byte
# MTU needs. link_wait = 0: b starts once a listens, so a must not wait
# for b at its open.
pair_memif_confs() {
	pair_memif_conf a server 1 2 "${1:-}"
	pair_memif_conf b client 2 1 "${2:-}"
}

# $1 side, $2 role, $3 own host number, $4 the peer's, $5 extra line
pair_memif_conf() {
	cat > "$tmp/$1.conf" <<EOC
[port]
dev  = net_memif0,role=$2,id=0,socket=$tmp/memif.sock,socket-abstract=no,mac=02:00:00:00:77:0$3
ip   = 192.168.77.$3/24
mtu  = 4096
link_wait = 0
$5
[eal]
lcores = 1
args   = $mem --file-prefix=$prefix-$1 --log-level=*:warning
[neigh]
192.168.77.$4 = 02:00:00:00:77:0$4
EOC
}

# One process, two ports joined by ringlink $2 on 192.168.$3.0/24: config
# file $1 (ring names are private to the process: its EAL shares no memory).
pair_loop_conf() {
	cat > "$1" <<EOC
[port0]
dev  = ringlink:$2,side=0
ip   = 192.168.$3.1/24
mtu  = 4096
[port1]
dev  = ringlink:$2,side=1
ip   = 192.168.$3.2/24
mtu  = 4096
[eal]
lcores = 1
args   = $mem --file-prefix=$prefix-a --log-level=*:warning
EOC
}
