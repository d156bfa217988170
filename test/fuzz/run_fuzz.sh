#!/usr/bin/env bash
# Run a libFuzzer target for a bounded time on a scratch copy of its seed
# corpus (the source tree is never written). Usage: run_fuzz.sh FUZZER SEEDS WORKDIR
# UROCE_FUZZ_SECONDS sets the time (default 60).
set -euo pipefail
fuzzer=$1 seeds=$2 work=$3
secs=${UROCE_FUZZ_SECONDS:-60}
rm -rf "$work"
mkdir -p "$work/corpus" "$work/artifacts"
"$fuzzer" -max_total_time="$secs" -rss_limit_mb=2048 -max_len=9100 \
	-print_final_stats=1 -artifact_prefix="$work/artifacts/" \
	"$work/corpus" "$seeds"
