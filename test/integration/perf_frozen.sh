#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The uroce authors
#
# A memif peer that freezes under many QPs: uroce-perf between two
# processes, QPS RC QPs (default 1,000) of 64 KiB WRITEs, 4 deep. Once the
# client's first 1 s line shows traffic, the server is stopped (SIGSTOP):
# the link stays up, but nothing drains the memif ring. The client's
# transmit queue must then be found stuck once (lib/net/port.c,
# wait_stuck(): its WARNING), and every QP must fail with RETRY_EXC_ERR,
# those that had sent nothing yet too: the client's summary says QPS of
# QPS failed, the first with "transport retry counter exceeded", and
# its JSON has failed_qps QPS and traffic before the freeze. The server
# is killed once the client has said so; the client must exit with
# status 1. No timing threshold: the waits below are bounds on a hang
# (the test's own timeout is the limit), not figures.
#
#	perf_frozen.sh UROCE_PERF [QPS]
set -u
perf=$1
nqp=${2:-1000}

. "$(dirname "$0")/pair.sh"
pair_init perf-frozen
port=$((20000 + $$ % 20000))
pair_memif_confs

fail() {
	echo "perf_frozen: $*"
	pair_show
	exit 1
}

# A 1 s line of the client's with a non-zero rate.
rate_seen() {
	awk '$4 == "Gbit/s" && $3 > 0 { f = 1 } END { exit !f }' \
		"$tmp/client.out"
}

"$perf" -c "$tmp/a.conf" --server -p "$port" --core -1 \
	>"$tmp/server.out" 2>&1 &
spid=$!
pair_wait_server || fail "the server did not start"
# -D far beyond the test: the run ends by its failures, or not at all.
"$perf" -c "$tmp/b.conf" --connect 127.0.0.1 -p "$port" --core -1 \
	--no-raw -w write -s 64K -q 4 --qps "$nqp" -D 600 \
	--json "$tmp/out.json" >"$tmp/client.out" 2>&1 &
cpid=$!
# A 1 s line with a non-zero rate: WRITEs complete, the QPs are mid-run.
pair_until 120 "$cpid" rate_seen || fail "no traffic"
kill -STOP "$spid"
echo "perf_frozen: server $spid stopped under $nqp QPs"
pair_until 150 "$cpid" grep -q 'QPs failed' "$tmp/client.out" ||
	fail "the client did not report its QPs failed"
kill -KILL "$spid"
wait "$spid" 2>/dev/null
spid=
wait "$cpid"
crc=$?
cpid=
pair_show
echo "perf_frozen: client exit $crc"
# 1: uroce-perf's failed run (a sanitizer's abort, 134, is not that).
[ "$crc" -eq 1 ] || fail "the client exited $crc, not 1"
# Stuck once, for good: a stuck queue that dropped only what waited and
# was busy again at once would be found stuck every 100 ms (hundreds of
# times in a run), and the QPs that had sent nothing would fail a few at
# a time, each waiting for a turn after a drop.
stuck=$(grep -c "tx queue 0 took no frame for 100 ms" "$tmp/client.out")
[ "$stuck" -eq 1 ] ||
	fail "the client's transmit queue was found stuck $stuck times, not once"
first="^uroce-perf: completion on QP 0x[0-9a-f]{6}: transport retry"
grep -Eq "$first counter exceeded\$" "$tmp/client.out" ||
	fail "the first error is not RETRY_EXC_ERR"
grep -q "^uroce-perf: $nqp of $nqp QPs failed;" "$tmp/client.out" ||
	fail "not every QP failed"
/usr/bin/python3 - "$tmp/out.json" "$nqp" <<'EOF' || fail "JSON"
import json, sys
r = json.load(open(sys.argv[1]))["results"][0]
n = int(sys.argv[2])
print(f"messages {r['messages']}, errors {r['errors']}, "
      f"failed_qps {r['failed_qps']}, timeouts {r['timeouts']}")
assert r["failed_qps"] == n, "failed_qps"
assert r["errors"] >= n, "errors"
assert r["messages"] > 0, "no traffic before the freeze"
EOF
echo "perf_frozen: $nqp of $nqp QPs failed behind a frozen peer"
