#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The uroce authors
#
# AF_XDP ports (dev = af_xdp:IFACE) on a veth pair between two network
# namespaces created (and removed) here. The configs have no ip and no
# [neigh]: addresses and neighbours come from the kernel. Scenarios:
#
#   pingpong  ibv_rc_pingpong over IPv4 (GID 0) and IPv6 (GID 1), while
#             ping and a TCP transfer run over the same veth: both tools
#             succeed, ping loses nothing, the TCP bytes arrive intact (a
#             SHA-256 of 4 MiB), the kernel's neighbour table holds the
#             peer, and no XDP program is left on either veth afterwards.
#   write_bw  ib_write_bw 64 KiB over IPv4, with ping and TCP likewise.
#   stale     a server killed with kill -9 leaves our program attached; the
#             next run replaces it (and says so) and the pair works.
#   limits    frame size and queues: with the veth at MTU 3500 and
#             mtu = 9000 asked, the port lowers its MTU to the interface's
#             and ibv_devinfo shows active_mtu 2048; lcores = 2 on a veth
#             (one queue) fails with a message naming the interface.
#   foreign   someone else's XDP program (xdp_pass.bpf.o) on the veth: the
#             port fails with a message naming the interface and the
#             program is still there, unchanged, afterwards.
#
#	af_xdp_veth.sh SCENARIO UROCE_RUN XDP_PASS_OBJ
#
# Needs root (namespaces, XDP): otherwise exits 77 (skipped).
# UROCE_TEST_PRELOAD (sanitizer builds): preloaded into the tools.
set -u
scen=$1
run=$2
pass_obj=$3

if [ "$(id -u)" -ne 0 ]; then
	echo "af_xdp_veth: not root, cannot create network namespaces: skipped"
	exit 77
fi
for t in ip ping ibv_rc_pingpong /usr/bin/python3; do
	command -v "$t" >/dev/null 2>&1 ||
		{ echo "af_xdp_veth: no $t: skipped"; exit 77; }
done

tag=x$$
ns_a=uroce-xdp-$tag-a
ns_b=uroce-xdp-$tag-b
if_a=${tag}xa
if_b=${tag}xb
ip4_a=10.81.0.1
ip6_a=fd00:81::1
work=$(mktemp -d /tmp/uroce-xdp-$tag.XXXXXX)
pids=

cleanup() {
	local p
	for p in $pids; do kill -9 "$p" 2>/dev/null; done
	wait 2>/dev/null
	ip netns del "$ns_a" 2>/dev/null
	ip netns del "$ns_b" 2>/dev/null
	rm -rf "$work" "/var/run/dpdk/uroce-$tag-a" "/var/run/dpdk/uroce-$tag-b"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

fail() { echo "af_xdp_veth $scen: FAIL: $*"; exit 1; }

# Two namespaces, a veth, IPv4 and IPv6 (no link-local, no DAD: GID 1 is
# the global address at once).
setup() {
	ip netns add "$ns_a" && ip netns add "$ns_b" || exit 1
	ip -n "$ns_a" link add "$if_a" type veth peer name "$if_b" \
		netns "$ns_b" || exit 1
	for s in a b; do
		local ns=ns_$s ifc=if_$s n=1
		[ $s = b ] && n=2
		ip -n "${!ns}" link set "${!ifc}" addrgenmode none
		ip -n "${!ns}" link set "${!ifc}" up
		ip -n "${!ns}" addr add 10.81.0.$n/24 dev "${!ifc}"
		ip -n "${!ns}" addr add fd00:81::$n/64 dev "${!ifc}" nodad
		cat >"$work/$s.conf" <<CONF
[port]
dev = af_xdp:${!ifc}
[eal]
lcores = 1
args = --no-pci ${UROCE_TEST_MEM:---no-huge -m 256} --file-prefix=uroce-$tag-$s --log-level=*:warning --log-level=uroce.glue:notice
CONF
	done
}

# tool SIDE LOG ARGS...: a verbs program under uroce-run in SIDE's namespace
# (background; its pid in $! and in pids).
tool() {
	local side=$1 log=$2 ns=ns_$1
	shift 2
	local pre=()
	[ -n "${UROCE_TEST_PRELOAD:-}" ] &&
		pre=(env "LD_PRELOAD=$UROCE_TEST_PRELOAD" ASAN_OPTIONS=detect_leaks=0)
	ip netns exec "${!ns}" "$run" -c "$work/$side.conf" -- "${pre[@]}" \
		"$@" >"$log" 2>&1 &
	pids="$pids $!"
}

# Wait (up to 10 s) for a TCP listener on port $1 in namespace a.
listening() {
	local i
	for i in $(seq 1 100); do
		ip netns exec "$ns_a" ss -ltn 2>/dev/null | grep -q ":$1 " &&
			return 0
		sleep 0.1
	done
	return 1
}

xdp_prog_of() {	# the XDP program id on interface $2 in namespace $1, or ""
	ip -n "$1" -d link show "$2" | sed -n 's/.*prog\/xdp id \([0-9]*\).*/\1/p'
}

# The side traffic: a TCP transfer of 4 MiB to namespace a (the receiver
# answers the SHA-256 of what it got) and 10 pings, in the background.
side_start() {
	ip netns exec "$ns_a" /usr/bin/python3 -c '
import hashlib, socket
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("10.81.0.1", 5201)); s.listen(1); s.settimeout(60)
c, _ = s.accept(); h = hashlib.sha256(); n = 0
while n < 4 << 20:
    b = c.recv(65536)
    if not b: break
    h.update(b); n += len(b)
c.sendall(("%d %s" % (n, h.hexdigest())).encode()); c.close()
' >"$work/tcp_a.log" 2>&1 &
	tcp_a=$!
	pids="$pids $tcp_a"
	listening 5201 || fail "TCP receiver not listening"
	ip netns exec "$ns_b" /usr/bin/python3 -c '
import hashlib, os, socket
d = os.urandom(4 << 20)
s = socket.create_connection(("10.81.0.1", 5201), timeout=60)
for i in range(0, len(d), 4096):
    s.sendall(d[i:i + 4096])
ans = s.recv(200).decode(); s.close()
want = "%d %s" % (len(d), hashlib.sha256(d).hexdigest())
print("tcp:", ans); exit(0 if ans == want else 1)
' >"$work/tcp_b.log" 2>&1 &
	tcp_b=$!
	ip netns exec "$ns_b" ping -c 10 -i 0.1 -W 2 "$ip4_a" >"$work/ping.log" 2>&1 &
	ping_b=$!
	pids="$pids $tcp_b $ping_b"
}

side_check() {
	wait "$tcp_b" || { cat "$work/tcp_b.log"; fail "TCP bytes not intact"; }
	wait "$ping_b" || { cat "$work/ping.log"; fail "ping lost packets"; }
	grep -q " 0% packet loss" "$work/ping.log" ||
		{ cat "$work/ping.log"; fail "ping lost packets"; }
	wait "$tcp_a"
	echo "side traffic: $(cat "$work/tcp_b.log"); $(grep -o '[0-9]* received' "$work/ping.log")"
}

# pair LABEL RESULT SERVER_ARGS -- CLIENT_ARGS: a server in a, a client in
# b, the side traffic during the run; both must exit 0 and print a line
# matching the regex RESULT (the tool's figures).
pair() {
	local label=$1 result=$2 srv=() cli=() i
	shift 2
	while [ "$1" != -- ]; do srv+=("$1"); shift; done
	shift
	cli=("$@")
	tool a "$work/$label-a.log" "${srv[@]}"
	local spid=$!
	# The client starts once the server listens on the tools' TCP port
	# (18515, the pingpongs' and perftest's default): both open the
	# device before they listen.
	listening 18515 ||
		{ cat "$work/$label-a.log"; fail "$label: the server never listened"; }
	side_start
	tool b "$work/$label-b.log" "${cli[@]}"
	local cpid=$!
	wait "$cpid"; local rc_b=$?
	wait "$spid"; local rc_a=$?
	side_check
	if [ $rc_a -ne 0 ] || [ $rc_b -ne 0 ]; then
		tail -n 15 "$work/$label-a.log" "$work/$label-b.log"
		fail "$label: server exit $rc_a, client exit $rc_b"
	fi
	for i in a b; do
		grep -qE "$result" "$work/$label-$i.log" ||
			{ cat "$work/$label-$i.log"; fail "$label: no result"; }
	done
	echo "$label: ok: $(grep -hE "$result" "$work/$label-b.log" | head -1)"
}

# ibv_rc_pingpong's last lines, for n iterations of 4096 bytes.
pp_done='[0-9]+ bytes in [0-9.]+ seconds'

no_prog_left() {
	[ -z "$(xdp_prog_of "$ns_a" "$if_a")" ] && [ -z "$(xdp_prog_of "$ns_b" "$if_b")" ] ||
		fail "an XDP program is left on the veth after exit"
}

kernel_neigh() {	# the kernel of b resolved a (we sent via its table)
	ip -n "$ns_b" neigh show "$1" dev "$if_b" | grep -q lladdr ||
		fail "no kernel neighbour entry for $1 in b"
}

scen_pingpong() {
	pair rc4 "$pp_done" ibv_rc_pingpong -g 0 -d uroce0 -n 3000 -- \
		ibv_rc_pingpong -g 0 -d uroce0 -n 3000 "$ip4_a"
	kernel_neigh "$ip4_a"
	no_prog_left
	pair rc6 "$pp_done" ibv_rc_pingpong -g 1 -d uroce0 -n 3000 -- \
		ibv_rc_pingpong -g 1 -d uroce0 -n 3000 "$ip6_a"
	kernel_neigh "$ip6_a"
	no_prog_left
}

scen_write_bw() {
	command -v ib_write_bw >/dev/null || { echo "no ib_write_bw: skipped"; exit 77; }
	# The row of figures: size, iterations, peak and average MB/s.
	pair wbw '^ 65536 +2000 +[0-9.]+ +[0-9.]+' ib_write_bw -d uroce0 -x 0 -F -s 65536 -n 2000 -- \
		ib_write_bw -d uroce0 -x 0 -F -s 65536 -n 2000 "$ip4_a"
	no_prog_left
}

scen_stale() {
	local id i
	tool a "$work/killed.log" ibv_rc_pingpong -g 0 -d uroce0
	local kpid=$!
	for i in $(seq 1 100); do
		id=$(xdp_prog_of "$ns_a" "$if_a")
		[ -n "$id" ] && break
		sleep 0.1
	done
	[ -n "$id" ] || { cat "$work/killed.log"; fail "program never attached"; }
	listening 18515 || { cat "$work/killed.log"; fail "the run never listened"; }
	# uroce-run execs the tool: kill -9 the process holding the port.
	kill -9 "$kpid"
	wait "$kpid" 2>/dev/null
	[ "$(xdp_prog_of "$ns_a" "$if_a")" = "$id" ] ||
		fail "kill -9 did not leave the program (id $id) behind"
	echo "stale: program $id left by the killed run"
	pair again "$pp_done" ibv_rc_pingpong -g 0 -d uroce0 -n 500 -- \
		ibv_rc_pingpong -g 0 -d uroce0 -n 500 "$ip4_a"
	grep -q "replaced a stale uroce XDP program (id $id)" "$work/again-a.log" ||
		{ cat "$work/again-a.log"; fail "no notice of the replacement"; }
	no_prog_left
}

scen_foreign() {
	local id after
	ip -n "$ns_a" link set dev "$if_a" xdp obj "$pass_obj" sec xdp ||
		fail "cannot attach the foreign program"
	id=$(xdp_prog_of "$ns_a" "$if_a")
	tool a "$work/foreign.log" ibv_devinfo -d uroce0
	wait $! && fail "the port opened over someone else's program"
	grep -q "interface $if_a has someone else's XDP program (id $id" \
		"$work/foreign.log" ||
		{ cat "$work/foreign.log"; fail "no clear error naming $if_a"; }
	grep "someone else" "$work/foreign.log" | head -1
	after=$(xdp_prog_of "$ns_a" "$if_a")
	[ "$after" = "$id" ] || fail "the foreign program $id was touched ($after)"
	ip -n "$ns_a" link set dev "$if_a" xdp off
}

scen_limits() {
	ip -n "$ns_a" link set "$if_a" mtu 3500 || fail "veth MTU 3500"
	ip -n "$ns_b" link set "$if_b" mtu 3500
	UROCE_PORT_MTU=9000 tool a "$work/mtu.log" ibv_devinfo -v -d uroce0
	wait $! || { cat "$work/mtu.log"; fail "ibv_devinfo on MTU 3500"; }
	grep -qE "active_mtu:[[:space:]]+2048" "$work/mtu.log" ||
		{ cat "$work/mtu.log"; fail "active_mtu is not 2048"; }
	grep -q "MTU 9000 lowered to 3500" "$work/mtu.log" ||
		{ cat "$work/mtu.log"; fail "no notice of the lowered MTU"; }
	echo "limits: $(grep -o 'MTU 9000 lowered to [0-9]*' "$work/mtu.log"), active_mtu 2048"
	UROCE_EAL_LCORES=2 tool a "$work/q.log" ibv_devinfo -d uroce0
	wait $! && fail "two queues on a one-queue veth"
	grep -q "interface $if_a has 1 queue for AF_XDP sockets, 2 wanted" \
		"$work/q.log" || { cat "$work/q.log"; fail "no clear queue error"; }
	grep "queue for AF_XDP" "$work/q.log" | head -1
	no_prog_left
}

setup
"scen_$scen"
echo "af_xdp_veth $scen: ok"
