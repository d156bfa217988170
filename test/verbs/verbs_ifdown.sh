#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The uroce authors
#
# Ports on a kernel interface follow it (test_verbs_ifdown.c): a veth pair
# between two network namespaces created (and removed) here, once with an
# af_packet port and once with an af_xdp port in namespace a.
#
#	verbs_ifdown.sh VERBS_IFDOWN_EXE
#
# Needs root (namespaces): otherwise exits 77, which meson counts as
# skipped. Touches no existing interface.
set -u
exe=$1

if [ "$(id -u)" -ne 0 ]; then
	echo "verbs_ifdown: not root, cannot create network namespaces: skipped"
	exit 77
fi
if ! command -v ip >/dev/null 2>&1; then
	echo "verbs_ifdown: no ip(8): skipped"
	exit 77
fi

tag=i$$
nsa=uroce-${tag}-a
nsb=uroce-${tag}-b
ifa=${tag}a
ifb=${tag}b

cleanup() {
	ip netns del "$nsa" 2>/dev/null
	ip netns del "$nsb" 2>/dev/null
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# A fresh pair each time: the test deletes its end.
pair() {
	ip -n "$nsa" link add "$ifa" type veth peer name "$ifb" netns "$nsb" &&
	ip -n "$nsa" link set "$ifa" up && ip -n "$nsb" link set "$ifb" up
}

ip netns add "$nsa" || exit 1
ip netns add "$nsb" || exit 1
for ns in "$nsa" "$nsb"; do
	ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1
done
rc=0
for dev in "net_af_packet0,iface=$ifa" "af_xdp:$ifa"; do
	pair || exit 1
	# Under LeakSanitizer: DPDK's af_xdp close leaks once the interface is
	# gone (lsan_af_xdp_gone.supp says what); only that is suppressed.
	case $dev in
	af_xdp:*) supp="suppressions=$(dirname "$0")/lsan_af_xdp_gone.supp" ;;
	*) supp= ;;
	esac
	LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}$supp" \
		ip netns exec "$nsa" "$exe" "$dev" "$ifa" "$nsb" "$ifb" || rc=1
	ip -n "$nsa" link del "$ifa" 2>/dev/null
done
exit $rc
