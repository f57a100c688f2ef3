#!/bin/bash
# Runs the recording-reader fuzzer for a bounded time over the seed corpus.
# New inputs go to a scratch directory, never into the source tree.
# usage: run_fuzz.sh FUZZER SEED_DIR [SECONDS]
set -u
fuzzer=$(realpath "$1") seeds=$(realpath "$2") secs=${3:-20}
work=$(mktemp -d /tmp/mms-fuzz-XXXXXX) || exit 1
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
# The RSS limit is for the reader: ASan's quarantine of freed memory (256 MiB by
# default) would take it all by itself.
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=16
"$fuzzer" -max_total_time="$secs" -timeout=10 -rss_limit_mb=256 -malloc_limit_mb=256 -print_final_stats=1 \
	"$work" "$seeds"
