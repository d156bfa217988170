#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The uroce authors
#
# SEND receive message rate with 1, 64 and 1024 RC QPs whose receives come
# from one shared receive queue (uroce-perf --srq) against the same QPs
# with private receive queues: two uroce-perf processes over the memif
# pair (config/memif-{a,b}.conf), one busy thread each on its own core.
# The two variants alternate, REPS times each; the median of each is shown
# with the SRQ/private ratio and the receive WQEs each side keeps posted
# (private: qps x 4 x depth; SRQ: min(2 x --inflight, qps x depth)). The raw
# ceiling of each run is in its JSON (the table shows message rates only).
#
#	bench/srq/run.sh [BUILD_DIR] [REPS] [OUT_DIR]
#
# BUILD_DIR: the build with app/perf/uroce-perf (default: build); REPS:
# runs of each variant (default 3); OUT_DIR: where the results go
# (default: BUILD_DIR/bench/srq): the table (srq.txt, also on stdout),
# every run's rate (srq.json) and each run's uroce-perf JSON (runs/).
# Environment: SRQ_QPS ("1 64 1024"), SRQ_ARGS (the client's workload:
# "-w send -m rate -s 64 -D 1 -q 32 --inflight 1024").
# Own memif socket and EAL file prefixes; kills only what it started.
set -u
here=$(cd "$(dirname "$0")/../.." && pwd)
build=$(readlink -f "${1:-$here/build}")
reps=${2:-3}
out=${3:-$build/bench/srq}
perf=$build/app/perf/uroce-perf
qps_list=${SRQ_QPS:-1 64 1024}
args=${SRQ_ARGS:--w send -m rate -s 64 -D 1 -q 32 --inflight 1024}
tmp=$(mktemp -d /tmp/uroce-srq-bench.XXXXXX) || exit 1
prefix=uroce-srq-bench$$
port=$((21000 + $$ % 9000))
spid=
run=0

cleanup() {
	[ -n "$spid" ] && kill -KILL "$spid" 2>/dev/null && wait "$spid" 2>/dev/null
	rm -rf "$tmp" /var/run/dpdk/"$prefix"-*
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# $1 side (a server, b client), then the command: run it with the side's
# memif socket (a new one each run: a server's old socket file would stay
# in the way) and file prefix; link_wait 0: b starts once a listens, so
# a must not wait for b at its open.
side() {
	local role=server mac=02:00:00:00:77:01 s=$1
	[ "$s" = b ] && role=client && mac=02:00:00:00:77:02
	shift
	UROCE_PORT_DEV="net_memif0,role=$role,id=0,socket=$tmp/memif-$run.sock,socket-abstract=no,mac=$mac" \
	UROCE_EAL_ARGS="--no-pci --no-huge -m 512 --file-prefix=$prefix-$s --log-level=*:warning" \
	UROCE_PORT_LINK_WAIT=0 \
		"$@"
}

# One run: $1 QPs, $2 "" or --srq; prints "rate recv_wqes" (Mmsg/s); its
# JSON in OUT_DIR/runs/QPS-{private,srq}-K.json.
run_one() {
	local json
	run=$((run + 1))
	json=$out/runs/$1-$([ -n "$2" ] && echo srq || echo private)-$run.json
	rm -f "$json"
	side a "$perf" -c "$here/config/memif-a.conf" --server -p "$port" \
		>"$tmp/server.out" 2>&1 &
	spid=$!
	# Until the server listens, or has exited (its output tells why).
	for _ in $(seq 1 100); do
		grep -q 'server on TCP port' "$tmp/server.out" && break
		kill -0 "$spid" 2>/dev/null || break
		sleep 0.1
	done
	# shellcheck disable=SC2086
	side b "$perf" -c "$here/config/memif-b.conf" --connect 127.0.0.1 \
		-p "$port" --quiet --json "$json" --qps "$1" $args $2 \
		>"$tmp/client.out" 2>&1 || {
		cat "$tmp/client.out" "$tmp/server.out" >&2
		return 1
	}
	wait "$spid"
	spid=
	/usr/bin/python3 - "$json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
r = [x for x in d["results"] if x["mode"] == "rate"][0]
print(f'{r["msg_rate_mps"]:.4f} {d["recv_wqes"]}')
EOF
}

median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

mkdir -p "$out/runs" || exit 1
rm -f "$out"/runs/*.json
printf "%6s | %14s %9s | %14s %9s | %9s\n" QPs "private Mmsg/s" "recv WQEs" \
	"SRQ Mmsg/s" "recv WQEs" "SRQ/priv" | tee "$out/srq.txt"
: > "$tmp/all"
for q in $qps_list; do
	: > "$tmp/rq"; : > "$tmp/srq"
	for _ in $(seq 1 "$reps"); do
		run_one "$q" "" >> "$tmp/rq" || exit 1
		run_one "$q" --srq >> "$tmp/srq" || exit 1
	done
	sed "s/^/$q private /" "$tmp/rq" >> "$tmp/all"
	sed "s/^/$q srq /" "$tmp/srq" >> "$tmp/all"
	rq=$(cut -d' ' -f1 "$tmp/rq" | median)
	srq=$(cut -d' ' -f1 "$tmp/srq" | median)
	printf "%6s | %14s %9s | %14s %9s | %8.2fx\n" "$q" "$rq" \
		"$(head -1 "$tmp/rq" | cut -d' ' -f2)" "$srq" \
		"$(head -1 "$tmp/srq" | cut -d' ' -f2)" \
		"$(echo "$srq $rq" | awk '{print $1 / $2}')" | tee -a "$out/srq.txt"
done
# Every run's rate: {QPs: {private|srq: {runs_mmsg_s, median, recv_wqes}}}.
/usr/bin/python3 - "$tmp/all" "$out/srq.json" <<'EOF'
import json, statistics, sys
res = {}
for line in open(sys.argv[1]):
    q, kind, rate, wqes = line.split()
    v = res.setdefault(q, {}).setdefault(kind, {"runs_mmsg_s": [],
                                                "recv_wqes": int(wqes)})
    v["runs_mmsg_s"].append(float(rate))
for q in res.values():
    for v in q.values():
        v["median_mmsg_s"] = statistics.median(v["runs_mmsg_s"])
json.dump(res, open(sys.argv[2], "w"), indent=1)
EOF
