#!/usr/bin/env bash
# Times a sweep cold (empty database) and warm (compile cache kept, results
# cleared), then prints what the database says about both runs and how many
# repetitions the variants took (issue 6's goals: seeds benchmark <= 3 min
# cold, <= 60 s warm on an H100).
#
#   tools/sweep_speed.sh [CONFIG] [DB]     default configs/seeds-benchmark.yaml, /tmp/sweep_speed.db
#
# Environment passes through (AUTOTUNE_LOOKAHEAD=0 turns compiling and
# preparing ahead off, for comparison). Needs build/autotune and sqlite3.
set -euo pipefail
cd "$(dirname "$0")/.."
config=${1:-configs/seeds-benchmark.yaml}
db=${2:-/tmp/sweep_speed.db}
[ -x build/autotune ] || { echo "sweep_speed: build/autotune missing (run make)" >&2; exit 1; }
[ -r "$config" ] || { echo "sweep_speed: cannot read $config" >&2; exit 1; }
command -v sqlite3 >/dev/null || { echo "sweep_speed: sqlite3 missing" >&2; exit 1; }

run() { # label
	local start end
	start=$(date +%s.%N)
	build/autotune sweep -c "$config" --db "$db" > "$db.$1.log" 2>&1 ||
		{ echo "sweep_speed: the $1 sweep failed; see $db.$1.log" >&2; tail -5 "$db.$1.log" >&2; exit 1; }
	end=$(date +%s.%N)
	awk -v a="$start" -v b="$end" -v l="$1" -v f="$db.$1.log" \
		'BEGIN { printf "%s: %.1f s wall (log %s)\n", l, b - a, f }'
}

rm -f "$db" "$db-wal" "$db-shm"
run cold
rm -f "$db.cold"
sqlite3 "$db" ".backup '$db.cold'"
sqlite3 "$db" "DELETE FROM kernels; DELETE FROM winners; DELETE FROM results;"
run warm
sqlite3 -header -column "$db.cold" "SELECT 'cold' AS run, round(compile_s, 1) AS compile_waited_s,
	round(bench_s, 1) AS check_and_time_s FROM sweeps"
sqlite3 -header -column "$db" "SELECT 'warm' AS run, round(compile_s, 1) AS compile_waited_s,
	round(bench_s, 1) AS check_and_time_s FROM sweeps ORDER BY id DESC LIMIT 1"
echo "repetitions of the variants' timings in the warm run (3: the first round only):"
sqlite3 -header -column "$db" "SELECT reps, count(*) AS results FROM results
	WHERE kind = 'variant' AND status = 'ok' GROUP BY reps ORDER BY reps"
