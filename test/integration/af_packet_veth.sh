#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The uroce authors
#
# af_packet ports on a veth pair between two network namespaces created
# (and removed) here: port_peer a in one, port_peer b in the other; ARP
# both ways, then RoCEv2 frames there and back (see port_peer.c).
#
#	af_packet_veth.sh PORT_PEER_EXE
#
# Needs root (namespaces): otherwise exits 77, which meson counts as
# skipped. Touches no existing interface.
set -u
peer=$1

if [ "$(id -u)" -ne 0 ]; then
	echo "af_packet_veth: not root, cannot create network namespaces: skipped"
	exit 77
fi
if ! command -v ip >/dev/null 2>&1; then
	echo "af_packet_veth: no ip(8): skipped"
	exit 77
fi

tag=u$$
nsa=uroce-${tag}-a
nsb=uroce-${tag}-b
ifa=${tag}a
ifb=${tag}b
pid_b=

cleanup() {
	[ -n "$pid_b" ] && kill "$pid_b" 2>/dev/null
	ip netns del "$nsa" 2>/dev/null
	ip netns del "$nsb" 2>/dev/null
}
trap cleanup EXIT
trap 'exit 1' INT TERM

ip netns add "$nsa" || exit 1
ip netns add "$nsb" || exit 1
ip -n "$nsa" link add "$ifa" type veth peer name "$ifb" netns "$nsb" || exit 1
# No kernel IPv6 chatter on the link: only our frames.
for ns in "$nsa" "$nsb"; do
	ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1
done
ip -n "$nsa" link set "$ifa" up || exit 1
ip -n "$nsb" link set "$ifb" up || exit 1

ip netns exec "$nsb" "$peer" "net_af_packet1,iface=$ifb" 10.77.0.2 10.77.0.1 b &
pid_b=$!
ip netns exec "$nsa" "$peer" "net_af_packet0,iface=$ifa" 10.77.0.1 10.77.0.2 a
rc_a=$?
wait "$pid_b"
rc_b=$?
pid_b=
echo "af_packet_veth: a exit $rc_a, b exit $rc_b"
[ "$rc_a" -eq 0 ] && [ "$rc_b" -eq 0 ]
