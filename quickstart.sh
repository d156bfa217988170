#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The uroce authors
#
# uroce quick start, for a Debian 12 machine, as root:
#   ./quickstart.sh demo   install what is missing, build, run the main job
#   ./quickstart.sh test   the same set-up, then the whole test suite, once
#                          in a release build and once under ASan+UBSan
#                          (with the fuzzers), ending "N passed, N failed"
# Both are idempotent and print nothing about set-up when all is in place.
# Environment: UROCE_FUZZ_SECONDS (default 20 here, 60 in meson test)
# bounds each fuzzer run.
set -euo pipefail
cd "$(dirname "$(readlink -f "$0")")"

PACKAGES=(
	meson ninja-build pkg-config gcc clang libclang-rt-14-dev
	libdpdk-dev dpdk dpdk-dev libibverbs-dev libbpf-dev libxdp-dev
	python3-scapy tshark iproute2 ibverbs-utils perftest gnuplot-nox
	iputils-ping iperf3 ethtool scdoc python3-pyverbs
	qemu-system-x86 busybox-static rdmacm-utils ibverbs-providers
	tgt libiscsi-bin
)
BUILD=build		# release build: the main job and the first test pass
BUILD_SAN=build-san	# clang, ASan + UBSan, fuzzers

log() { printf 'quickstart: %s\n' "$*" >&2; }

missing_packages() {
	local p
	for p in "${PACKAGES[@]}"; do
		dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null |
			grep -q '^install ok installed$' || printf '%s\n' "$p"
	done
}

install_packages() {
	local missing
	missing=$(missing_packages)
	[ -z "$missing" ] && return 0
	[ "$(id -u)" -eq 0 ] || { log "run as root to install: $missing"; exit 1; }
	log "installing:" $missing
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	# shellcheck disable=SC2086
	apt-get install -y -qq --no-install-recommends $missing >/dev/null
}

# Reserve 2 MiB hugepages and mount hugetlbfs when we can. Programs that start
# DPDK read UROCE_TEST_MEM: --in-memory with hugepages, --no-huge otherwise.
setup_hugepages() {
	local want=512 have
	have=$(cat /proc/sys/vm/nr_hugepages 2>/dev/null || echo 0)
	if [ "$have" -lt "$want" ] && [ -w /proc/sys/vm/nr_hugepages ]; then
		echo "$want" >/proc/sys/vm/nr_hugepages 2>/dev/null || true
	fi
	if ! mountpoint -q /dev/hugepages 2>/dev/null && [ "$(id -u)" -eq 0 ]; then
		mkdir -p /dev/hugepages
		mount -t hugetlbfs -o pagesize=2M nodev /dev/hugepages 2>/dev/null || true
	fi
	if mountpoint -q /dev/hugepages 2>/dev/null &&
	   [ "$(cat /proc/sys/vm/nr_hugepages 2>/dev/null || echo 0)" -gt 0 ]; then
		export UROCE_TEST_MEM="--in-memory"
	else
		log "no hugepages: DPDK runs with --no-huge"
		export UROCE_TEST_MEM="--no-huge -m 256"
	fi
}

# build DIR [meson options...]: configure once, then build quietly.
build() {
	local dir=$1
	shift
	if [ ! -f "$dir/build.ninja" ]; then
		meson setup "$dir" "$@" >"$dir.setup.log" 2>&1 ||
			{ cat "$dir.setup.log"; exit 1; }
		rm -f "$dir.setup.log"
	fi
	ninja -C "$dir" >"$dir/ninja.log" 2>&1 || { cat "$dir/ninja.log"; exit 1; }
}

build_release() { build "$BUILD" --buildtype=release -Dwerror=true; }

build_sanitized() {
	CC=clang build "$BUILD_SAN" --buildtype=debugoptimized -Dwerror=true \
		-Db_sanitize=address,undefined -Db_lundef=false -Dfuzz=true
}

# Count meson's results (testlog.json, one JSON object per test).
count_results() {
	/usr/bin/python3 - "$@" <<'EOF'
import json, sys
ok = bad = skip = 0
for path in sys.argv[1:]:
    try:
        lines = open(path).read().splitlines()
    except OSError:
        bad += 1
        continue
    for line in lines:
        r = json.loads(line)["result"]
        if r in ("OK", "EXPECTEDFAIL"):
            ok += 1
        elif r == "SKIP":
            skip += 1
        else:
            bad += 1
print(f"{ok} passed, {bad} failed" + (f", {skip} skipped" if skip else ""))
sys.exit(1 if bad or ok == 0 else 0)
EOF
}

# CI starts from a fresh machine: the package lists first.
ci_apt_update() {
	if [ "${CI:-}" = true ] && [ "$(id -u)" -eq 0 ]; then
		apt-get update -qq
	fi
}

# stage NAME COMMAND...: run COMMAND; under CI (CI=true) say how long it
# took, so that a CI log shows where its time went.
stage() {
	local name=$1 start=$SECONDS rc=0
	shift
	"$@" || rc=$?
	[ "${CI:-}" = true ] && log "$name: $((SECONDS - start)) s"
	return "$rc"
}

run_tests() {
	local rc=0
	export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
	export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
	# The seed corpora in the tree already reach the coverage a 60 s run
	# reaches (docs/testing.md): each fuzzer starts there and goes on.
	export UROCE_FUZZ_SECONDS=${UROCE_FUZZ_SECONDS:-20}
	echo "== release build: $BUILD"
	# The interop suite (uroce against Linux's rxe in a QEMU guest, 2 to
	# 4 minutes of TCG) in the release build only: it checks the wire
	# against another implementation, which the sanitizers do not change.
	# interop-full is run by hand.
	# The conformance suite in each progress mode once (docs/testing.md):
	# engine lcores here with three inline cases (inline-san: the other
	# inline cases), inline progress under the sanitizers.
	stage "release tests" meson test -C "$BUILD" --no-rebuild \
		--print-errorlogs --no-suite fuzz \
		--no-suite interop-full --no-suite inline-san || rc=1
	echo "== ASan+UBSan build (clang): $BUILD_SAN"
	stage "sanitized tests" meson test -C "$BUILD_SAN" --no-rebuild \
		--print-errorlogs --no-suite conformance-lcore \
		--no-suite interop --no-suite interop-full || rc=1
	count_results "$BUILD/meson-logs/testlog.json" \
		"$BUILD_SAN/meson-logs/testlog.json" || rc=1
	return $rc
}

# The main job: uroce-perf between two processes over the memif pair, an
# RC WRITE size sweep and an RC WRITE 8 B latency test, each figure with
# the raw DPDK ceiling measured in the same run (about 30 s).
run_demo() {
	local perf=$BUILD/app/perf/uroce-perf out spid rc=0
	out=$(mktemp /tmp/uroce-demo.XXXXXX)
	# The server's open waits for its memif client ([port] link_wait)
	# and listens on TCP after it; the client retries its TCP connect.
	# The client starts 1 s after the server's memif socket appears (at
	# most 10 s), when the server's port has started: a client that
	# connects to the socket before that, or before it exists, now and
	# then never gets its link up.
	"$perf" -c config/memif-a.conf --server --quiet >"$out" 2>&1 &
	spid=$!
	for _ in $(seq 1 100); do
		[ -S /run/uroce/memif-ab.sock ] && break
		kill -0 "$spid" 2>/dev/null || break
		sleep 0.1
	done
	sleep 1
	"$perf" -c config/memif-b.conf --connect 127.0.0.1 -w write \
		-m bw,lat -a --max-size 1M -D 0.5 --quiet \
		--json "$BUILD/uroce-perf-demo.json" || rc=$?
	wait "$spid" || rc=$((rc ? rc : $?))
	[ "$rc" -eq 0 ] || cat "$out" >&2
	rm -f "$out"
	return "$rc"
}

main() {
	local cmd=${1:-}
	case "$cmd" in
	demo)
		install_packages
		setup_hugepages
		build_release
		run_demo
		;;
	test)
		stage "apt-get update" ci_apt_update
		stage install install_packages
		setup_hugepages
		stage "release build" build_release
		stage "sanitized build" build_sanitized
		run_tests
		;;
	*)
		sed -n '5,12p' "$0" | sed 's/^# \{0,1\}//'
		exit 2
		;;
	esac
}

main "$@"
