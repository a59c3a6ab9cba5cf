#!/usr/bin/env bash
# Runs the libFuzzer targets built by `make fuzz-build` (fuzz/Makefile.inc).
#
#   fuzz/run.sh [TARGET...]            fuzz each for FUZZ_SECONDS (600),
#                                      FUZZ_JOBS (2) targets at a time
#   fuzz/run.sh --replay [TARGET...]   run each once over its seeds and
#                                      tests/fuzz_corpus/TARGET (no fuzzing)
#
# Environment: FUZZ_BIN (build/fuzz), FUZZ_SECONDS, FUZZ_JOBS, FUZZ_TIMEOUT
# (seconds one input may take before it counts as a hang; 2), FUZZ_RSS_MB
# (2048), FUZZ_EXTRA (more libFuzzer flags).
# Each target's new inputs go to $FUZZ_BIN/corpus/TARGET (fuzz/corpus/TARGET
# holds the seeds and is only read), crashes, leaks, hangs and slow inputs
# to $FUZZ_BIN/artifacts/TARGET/, the log to $FUZZ_BIN/logs/TARGET.log. A
# target that finds something exits non-zero, and so does this script.
# Keep a crashing input under tests/fuzz_corpus/TARGET/ once it is fixed:
# tests/test_fuzz_regressions.c replays every file there.
set -uo pipefail
cd "$(dirname "$0")/.."

BIN=${FUZZ_BIN:-build/fuzz}
SECONDS_EACH=${FUZZ_SECONDS:-600}
JOBS=${FUZZ_JOBS:-2}
TIMEOUT=${FUZZ_TIMEOUT:-2}
RSS=${FUZZ_RSS_MB:-2048}
ALL="fuzz_config fuzz_manifest fuzz_expr fuzz_dispatch_db fuzz_dispatch_db_patch"

replay=0
if [ "${1:-}" = --replay ]; then
	replay=1
	shift
fi
targets=${*:-$ALL}

# The longest input each target gets: YAML files of a few kilobytes,
# expressions of a line, whole database files (the seed is ~20 KB), and
# up to 256 patches for the patch mode.
max_len() {
	case $1 in
	fuzz_config | fuzz_manifest) echo 8192 ;;
	fuzz_expr) echo 2048 ;;
	fuzz_dispatch_db) echo 65536 ;;
	fuzz_dispatch_db_patch) echo 1024 ;;
	*) echo 4096 ;;
	esac
}

dict() {
	case $1 in
	fuzz_config) echo fuzz/dict/config.dict ;;
	fuzz_manifest) echo fuzz/dict/manifest.dict ;;
	fuzz_expr) echo fuzz/dict/expr.dict ;;
	*) echo "" ;;
	esac
}

seeds() {
	case $1 in
	fuzz_dispatch_db_patch) echo fuzz/corpus/fuzz_dispatch_db_patch ;;
	*) echo "fuzz/corpus/$1" ;;
	esac
}

run_one() {
	local t=$1 d
	local exe=$BIN/$t
	if [ ! -x "$exe" ]; then
		echo "$exe is missing: make fuzz-build" >&2
		return 2
	fi
	d=$(dict "$t")
	local opts=(-max_len="$(max_len "$t")" -timeout="$TIMEOUT" -rss_limit_mb="$RSS"
		-report_slow_units=1 -print_final_stats=1)
	[ -n "$d" ] && opts+=(-dict="$d")
	mkdir -p "$BIN/corpus/$t" "$BIN/artifacts/$t" "$BIN/logs"
	local reproducers=()
	[ -d "tests/fuzz_corpus/$t" ] && reproducers+=("tests/fuzz_corpus/$t")
	if [ $replay = 1 ]; then
		local files=()
		for dir in "$(seeds "$t")" "${reproducers[@]}"; do
			[ -d "$dir" ] || continue
			while IFS= read -r -d '' f; do files+=("$f"); done \
				< <(find "$dir" -type f ! -name README\* -print0)
		done
		[ ${#files[@]} -eq 0 ] && return 0
		echo "== $t: replaying ${#files[@]} inputs"
		"$exe" "${opts[@]}" ${FUZZ_EXTRA:-} "${files[@]}" > "$BIN/logs/$t.replay.log" 2>&1
		local rc=$?
		[ $rc -ne 0 ] && tail -n 40 "$BIN/logs/$t.replay.log"
		return $rc
	fi
	echo "== $t: fuzzing for ${SECONDS_EACH}s (log $BIN/logs/$t.log)"
	"$exe" "${opts[@]}" -max_total_time="$SECONDS_EACH" \
		-artifact_prefix="$BIN/artifacts/$t/" ${FUZZ_EXTRA:-} \
		"$BIN/corpus/$t" "$(seeds "$t")" "${reproducers[@]}" > "$BIN/logs/$t.log" 2>&1
	local rc=$?
	grep -E '^stat::number_of_executed_units|^stat::average_exec_per_sec|^Done' \
		"$BIN/logs/$t.log" | sed "s/^/   $t: /"
	if [ $rc -ne 0 ]; then
		echo "== $t FAILED (exit $rc); the end of its log:" >&2
		tail -n 60 "$BIN/logs/$t.log" >&2
	fi
	return $rc
}

status=0
running=0
pids=()
for t in $targets; do
	run_one "$t" &
	pids+=($!)
	running=$((running + 1))
	if [ "$running" -ge "$JOBS" ]; then
		wait -n || status=1
		running=$((running - 1))
	fi
done
while [ "$running" -gt 0 ]; do
	wait -n || status=1
	running=$((running - 1))
done
exit $status
