#!/usr/bin/env bash
# Robustness scenarios of issue 7, run on a machine with a GPU:
#   1. faults: a sweep over a template whose variants fault, hang and trap
#      finishes; those variants are stored as failed with the reason.
#   2. kill -9: a sweep killed at several moments resumes to a complete,
#      intact database with no result lost or duplicated.
#   3. concurrency: two sweeps (shards 1/2 and 2/2) write one database at the
#      same time while `autotune show` (the dispatch library) reads it.
# Usage: tests/device/robustness.sh [faults|kill|concurrent]...  (default all)
set -uo pipefail
cd "$(dirname "$0")/../.."
AT=build/autotune
work=$(mktemp -d)
status=0
check() { python3 tests/device/check_db.py "$@" || status=1; }

faults() {
	echo "== faults"
	local db=$work/faults.db
	$AT sweep -c tests/device/faults.yaml --templates tests/device/templates --db "$db" \
		--watchdog 5 || { echo "FAIL: the sweep exited $?"; status=1; }
	check "$db" 2 --faults
}

kill_resume() {
	echo "== kill -9 and resume"
	local db=$work/kill.db
	for delay in 3 7 12 18; do
		$AT sweep -c tests/device/small.yaml --db "$db" >/dev/null 2>&1 &
		local pid=$!
		sleep "$delay"
		kill -9 "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
		sleep 1
		if pgrep -f "autotune sweep -c tests/device/small.yaml" >/dev/null; then
			echo "FAIL: a worker outlived its killed sweep"; status=1
			pkill -9 -f "autotune sweep -c tests/device/small.yaml"
		fi
		echo "killed after ${delay} s"
		check "$db" 0
	done
	$AT sweep -c tests/device/small.yaml --db "$db" | tail -3 || status=1
	check "$db" 10
}

concurrent() {
	echo "== two sweeps and a reader on one database"
	local db=$work/shared.db
	$AT sweep -c tests/device/small.yaml --db "$db" --shard 1/2 >"$work/a.log" 2>&1 &
	local a=$!
	$AT sweep -c tests/device/small.yaml --db "$db" --shard 2/2 >"$work/b.log" 2>&1 &
	local b=$!
	local reads=0 bad=0
	while kill -0 "$a" 2>/dev/null || kill -0 "$b" 2>/dev/null; do
		if [ -f "$db" ]; then
			out=$($AT show --db "$db" -M 4096 -N 1024 --dtype f32 \
				--gpu "NVIDIA H100 80GB HBM3" --cc 9.0 2>&1) || { bad=$((bad + 1)); echo "$out"; }
			reads=$((reads + 1))
		fi
		sleep 0.2
	done
	wait "$a" || { echo "FAIL: shard 1/2 exited $?"; tail "$work/a.log"; status=1; }
	wait "$b" || { echo "FAIL: shard 2/2 exited $?"; tail "$work/b.log"; status=1; }
	echo "$reads reads by autotune show during the sweeps, $bad failed"
	[ "$bad" = 0 ] || status=1
	check "$db" 10
}

[ $# = 0 ] && set -- faults kill concurrent
for s in "$@"; do
	case $s in
	faults) faults ;;
	kill) kill_resume ;;
	concurrent) concurrent ;;
	*) echo "unknown scenario $s"; exit 2 ;;
	esac
done
[ $status = 0 ] && echo "robustness: all passed" || echo "robustness: FAILED"
exit $status
