#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The uroce authors
#
# The kernel exception path with a real kernel behind it: side a's port
# takes its veth away from the kernel (af_packet, the kernel has no
# address on it, as a PCI NIC bound to DPDK) and gives the kernel a tap
# ([port] exception) with the veth's MAC, where the kernel's address lives.
# af_packet has no rte_flow: the port says so and dispatches in software.
# From namespace b, whose kernel owns the other veth:
#   - ping to a's kernel address, through a's port and tap (before and
#     during the RoCE run);
#   - the TCP connection ibv_rc_pingpong exchanges its addresses over,
#     a's kernel listening behind the tap;
#   - the RoCEv2 traffic itself, to a's stack (uroce-run on both sides).
#
#	exc_veth.sh UROCE_RUN
#
# UROCE_TEST_PRELOAD (sanitizer builds): preloaded into the tool.
# Needs root, ip(8), ping, ethtool and ibv_rc_pingpong: otherwise exits 77 (skip).
set -u
run=$1

skip() { echo "exc_veth: $*: skipped"; exit 77; }
[ "$(id -u)" -eq 0 ] || skip "not root"
for t in ip ping ethtool ibv_rc_pingpong; do
	command -v "$t" >/dev/null 2>&1 || skip "no $t"
done

tag=net$$
nsa=uroce-${tag}-a
nsb=uroce-${tag}-b
va=${tag}a
vb=${tag}b
tap=${tag}x
dir=$(mktemp -d /tmp/uroce-exc.XXXXXX)
pid_a=

cleanup() {
	[ -n "$pid_a" ] && kill "$pid_a" 2>/dev/null && wait "$pid_a" 2>/dev/null
	ip netns del "$nsa" 2>/dev/null
	ip netns del "$nsb" 2>/dev/null
	rm -rf "$dir" "/var/run/dpdk/unet-a-$$" "/var/run/dpdk/unet-b-$$"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

fail() {
	echo "exc_veth: FAIL: $*"
	for f in "$dir"/*.log; do echo "---- $f"; cat "$f"; done
	exit 1
}

ip netns add "$nsa" && ip netns add "$nsb" || exit 1
ip -n "$nsa" link add "$va" address 02:00:00:00:81:01 type veth \
	peer name "$vb" netns "$nsb" address 02:00:00:00:81:02 || exit 1
for ns in "$nsa" "$nsb"; do
	ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1
	ip netns exec "$ns" sysctl -qw net.ipv6.conf.default.disable_ipv6=1
	ip -n "$ns" link set lo up
done
# a's kernel must not take frames from its veth (a NIC bound to DPDK is
# gone from it; af_packet only shares the interface): no ARP there, and
# strict reverse-path filtering drops IP from b's subnet, which routes
# through the tap. Only the port's exception path can then reach it.
ip -n "$nsa" link set "$va" arp off || exit 1
ip netns exec "$nsa" sysctl -qw net.ipv4.conf.all.rp_filter=1
ip netns exec "$nsa" sysctl -qw net.ipv4.conf."$va".rp_filter=1
ip -n "$nsa" link set "$va" up && ip -n "$nsb" link set "$vb" up || exit 1
ip -n "$nsb" addr add 10.81.0.2/24 dev "$vb" || exit 1
# b's TCP would leave its checksum to the veth "hardware", which a veth
# never fills: a's af_packet ring gets it unfinished, and a's kernel,
# behind the tap, drops the segment. A NIC sends finished checksums.
ip netns exec "$nsb" ethtool -K "$vb" tx off >/dev/null || exit 1

eal="--no-pci --no-huge -m 256 --log-level=*:warning --log-level=uroce.net:info"
cat >"$dir/a.conf" <<EOF
[port]
dev = net_af_packet0,iface=$va,qdisc_bypass=1
ip = 10.81.0.100/24
exception = net_tap_unet0,iface=$tap
[eal]
args = $eal --file-prefix=unet-a-$$
EOF
cat >"$dir/b.conf" <<EOF
[port]
dev = net_af_packet0,iface=$vb,qdisc_bypass=1
ip = 10.81.0.101/24
[eal]
args = $eal --file-prefix=unet-b-$$
EOF

# Sanitizer builds: the runtime our library needs inside the tool.
tool=ibv_rc_pingpong
if [ -n "${UROCE_TEST_PRELOAD:-}" ]; then
	tool="env LD_PRELOAD=$UROCE_TEST_PRELOAD ASAN_OPTIONS=detect_leaks=0 $tool"
fi

# Side a: the server. Its port creates the tap; the kernel's address goes
# on it once it is there.
ip netns exec "$nsa" "$run" -c "$dir/a.conf" -- \
	$tool -g 0 -d uroce0 -n 10000 >"$dir/a.log" 2>&1 &
pid_a=$!
i=0
until ip -n "$nsa" link show "$tap" >/dev/null 2>&1; do
	i=$((i + 1))
	[ $i -gt 100 ] && fail "no tap $tap after 10 s"
	kill -0 "$pid_a" 2>/dev/null || fail "the server exited"
	sleep 0.1
done
ip -n "$nsa" addr add 10.81.0.1/24 dev "$tap" && \
	ip -n "$nsa" link set "$tap" up || fail "tap address"
[ "$(ip netns exec "$nsa" cat /sys/class/net/$tap/address)" = \
  02:00:00:00:81:01 ] || fail "the tap does not have the veth's MAC"

# The kernel's ping, through the port, before any RoCE.
ip netns exec "$nsb" ping -c 3 -W 5 10.81.0.1 >"$dir/ping1.log" 2>&1 ||
	fail "ping before the run"
# The client: TCP to a's kernel, RoCEv2 to a's stack, a ping meanwhile
# (1 s of it, well inside the 10000 round trips, which end the server).
ip netns exec "$nsb" ping -c 5 -i 0.2 -W 5 10.81.0.1 >"$dir/ping2.log" 2>&1 &
pid_p=$!
ip netns exec "$nsb" timeout 60 "$run" -c "$dir/b.conf" -- \
	$tool -g 0 -d uroce0 -n 10000 10.81.0.1 >"$dir/b.log" 2>&1 ||
	fail "client"
wait "$pid_p" && grep -q " 0% packet loss" "$dir/ping2.log" ||
	fail "ping during the run"
wait "$pid_a" || fail "server"
pid_a=
grep -q "iters in" "$dir/a.log" && grep -q "iters in" "$dir/b.log" ||
	fail "no completed run"
! grep -q "duplicates" "$dir/ping1.log" "$dir/ping2.log" ||
	fail "duplicate ping replies: a's kernel answered from its veth too"
grep -q "no rte_flow steering" "$dir/a.log" ||
	fail "the port did not say it dispatches in software"
grep -h "packet loss\|iters in" "$dir"/*.log
echo "exc_veth: ok"
