#!/usr/bin/env bash
# Regenerates results/example/ (the README's example and its tests' fixture:
# the default sweep's database, its log, the report and its picture; the
# numbers of docs/RESULTS.md's H100 section) from a fresh default sweep
# (configs/softmax.yaml) on a GPU. Two steps, as the GPU is on another
# machine:
#
#   bash tools/regen_example.sh sweep
#       on the GPU machine, from the repository root, with $OUT the folder
#       whose files come back: builds nothing (the device tool's machine has
#       no libyaml or SQLite to build with) but runs build-dev/autotune, which
#       tools/device_stage.sh staged here (carry ["build-dev"]), else
#       build/autotune. Sweeps into a fresh database (about 5.5 min on an
#       H100, no compile cache), then writes $OUT/example.db.xz (the database
#       without its compile cache, in rollback-journal mode so that readers
#       need no -wal/-shm beside it) and $OUT/example-sweep.log.
#
#   tools/regen_example.sh install FILES/example.db.xz FILES/example-sweep.log [NAME]
#       here, on the fetched files: results/example/NAME.db (default
#       h100-default, the GPU named in the README), NAME-sweep.log,
#       report.html (rendered by build/autotune from that path, so the page
#       names it) and report.png (a 1400 x 1400 headless Chromium screenshot,
#       as make browser-test takes; skipped with a message without chromium).
#
# The seeds the dispatch library carries come from the example database
# (tools/gen_seed_winners.py): regenerate them too if its winners should ship.
set -euo pipefail
cd "$(dirname "$0")/.."

die() {
	echo "regen_example: $*" >&2
	exit 1
}

sweep() {
	: "${OUT:?set OUT to the folder whose files come back}"
	local bin=build/autotune templates=templates
	if [ -x build-dev/autotune ]; then
		bin=build-dev/autotune
		templates=build-dev/templates
		export LD_LIBRARY_PATH=$PWD/build-dev/lib
	fi
	[ -x "$bin" ] || die "no build-dev/autotune or build/autotune: run tools/device_stage.sh here first"
	command -v python3 >/dev/null || die "python3 is needed to write the example database"
	command -v xz >/dev/null || die "xz is needed to pack the example database"
	local db=/tmp/regen-example.db
	rm -f "$db" "$db-wal" "$db-shm" /tmp/regen-example-small.db
	local start=$(date +%s) rc=0
	timeout 570 "$bin" sweep --templates "$templates" -c configs/softmax.yaml --db "$db" \
		>"$OUT/example-sweep.log" 2>&1 || rc=$?
	echo "sweep rc $rc in $(($(date +%s) - start)) s"
	tail -3 "$OUT/example-sweep.log"
	[ $rc -eq 0 ] || die "the sweep failed (rc $rc): see example-sweep.log"
	python3 - "$db" /tmp/regen-example-small.db <<'PY'
import sqlite3, sys
src, small = sys.argv[1], sys.argv[2]
sqlite3.connect(src).execute(f"VACUUM INTO '{small}'")
c = sqlite3.connect(small)
c.execute("DELETE FROM compile_cache")
c.commit()
c.execute("PRAGMA journal_mode = DELETE")
c.execute("VACUUM")
v = c.execute("PRAGMA user_version").fetchone()[0]
n = c.execute("SELECT count(*) FROM winners").fetchone()[0]
r = c.execute("SELECT count(*) FROM results").fetchone()[0]
t = c.execute("SELECT count(DISTINCT template) FROM results WHERE kind = 'variant'").fetchone()[0]
c.close()
print(f"example database: schema version {v}, {n} shapes, {r} results, {t} templates")
PY
	ls -l /tmp/regen-example-small.db
	xz -9 -c /tmp/regen-example-small.db >"$OUT/example.db.xz"
	ls -l "$OUT/example.db.xz"
}

install_example() {
	local packed=$1 log=$2 name=${3:-h100-default}
	[ -f "$packed" ] || die "$packed: no such file"
	[ -f "$log" ] || die "$log: no such file"
	[ -x build/autotune ] || make -j2 build/autotune
	local dir=results/example db=results/example/$name.db
	xz -dc "$packed" >"$db.new"
	build/autotune list --db "$db.new" >/dev/null || die "$db.new: not a readable tuning database"
	mv "$db.new" "$db"
	cp "$log" "$dir/$name-sweep.log"
	build/autotune report --db "$db" -o "$dir/report.html"
	local chromium
	chromium=$(command -v chromium || command -v chromium-browser || true)
	if [ -z "$chromium" ]; then
		echo "regen_example: no chromium (make deps-ci installs it): $dir/report.png not redrawn" >&2
	else
		local profile
		profile=$(mktemp -d /tmp/regen-example.XXXXXX)
		timeout 120 "$chromium" --headless --no-sandbox --disable-gpu --hide-scrollbars \
			--no-first-run --no-default-browser-check --user-data-dir="$profile" \
			--screenshot="$PWD/$dir/report.png" --window-size=1400,1400 \
			"file://$PWD/$dir/report.html" >/dev/null 2>&1 || die "chromium could not take the screenshot"
		rm -rf "$profile"
	fi
	build/autotune list --db "$db" | head -3
	ls -l "$dir"
	echo "regen_example: check docs/RESULTS.md's numbers against $dir/$name-sweep.log, then commit $dir"
}

case ${1:-} in
sweep) sweep ;;
install)
	[ $# -ge 3 ] || die "usage: tools/regen_example.sh install EXAMPLE.db.xz SWEEP.log [NAME]"
	install_example "$2" "$3" "${4:-}"
	;;
*) die "usage: tools/regen_example.sh sweep | install EXAMPLE.db.xz SWEEP.log [NAME]" ;;
esac
