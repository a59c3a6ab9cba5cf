#!/usr/bin/env bash
# Browser check of `autotune report`: renders a report from a copy of a
# tuning database (default results/example/h100-default.db) into which a
# failed variant with hostile strings is injected, opens it in headless
# Chromium and checks that
#   - the screenshot (1400 x 3000) is a PNG that is not blank,
#   - the DOM after load has the plot's <svg>, the script ran (class "js"),
#     and the hostile strings are text, not elements,
#   - the console shows no error ("Uncaught", "ERROR:CONSOLE"); a page with a
#     deliberate error is checked first, so that a broken capture fails,
#   - every result is reachable: once the page's buttons have put each
#     shape's text rows into its table, the tables hold as many rows as the
#     database has results (reports/report_rest.h),
#   - with every shape open, no table is wider than its box or the 1400 px
#     window (a table wider than its box would scroll sideways),
#   - the page of the example database is under 2 MB.
# Usage: tests/browser/check_report.sh [DB]      ($AUTOTUNE: the program,
# default build/autotune). Needs chromium and python3. Exit 0 when all pass.
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
autotune=${AUTOTUNE:-$root/build/autotune}
db=${1:-$root/results/example/h100-default.db}

fail() {
	echo "check_report: FAIL: $*" >&2
	exit 1
}

chromium=$(command -v chromium || command -v chromium-browser || true)
[ -n "$chromium" ] || fail "chromium not installed (Debian: apt-get install chromium)"
command -v python3 >/dev/null || fail "python3 not installed"
[ -x "$autotune" ] || fail "$autotune is missing: run make"
[ -f "$db" ] || fail "$db: no such database"

work=$(mktemp -d /tmp/check_report.XXXXXX)
trap 'rm -rf "$work"' EXIT

# A copy, so that neither the original nor its folder is touched, with one
# more result whose strings would run script if they were not escaped.
cp "$db" "$work/test.db"
python3 - "$work/test.db" <<'PY' || fail "cannot add the hostile row to the copy of $db"
import sqlite3, sys
con = sqlite3.connect(sys.argv[1])
evil = '<img src=x onerror="console.error(\'injected\')"><script>console.error("injected")</script>'
n = con.execute(
    "INSERT INTO results (sweep_id, gpu_id, op, dtype, m, n, kind, template, params, status, reason)"
    " SELECT sweep_id, gpu_id, op, dtype, m, n, 'variant', ?1, ?1, 'check_failed', ?1"
    " FROM winners ORDER BY gpu_id, op, dtype, m, n LIMIT 1", (evil,)).rowcount
con.commit()
sys.exit(0 if n == 1 else 1)
PY

"$autotune" report --db "$work/test.db" -o "$work/report.html" 2>"$work/report.err" ||
	fail "autotune report failed: $(cat "$work/report.err")"

flags=(--headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run
	--no-default-browser-check --user-data-dir="$work/profile")

# Runs chromium with a time limit; stdout and stderr to the named files.
browse() {
	local out=$1 err=$2
	shift 2
	timeout 120 "$chromium" "${flags[@]}" "$@" >"$out" 2>"$err"
}

console_errors() {
	grep -E "Uncaught|ERROR:CONSOLE|injected" "$1" || true
}

# 0. The console capture works: a page with an error must show it.
printf '<!DOCTYPE html><title>x</title><script>no_such_function();</script>\n' >"$work/control.html"
browse "$work/control.dom" "$work/control.log" --enable-logging=stderr --v=0 --dump-dom \
	"file://$work/control.html" || fail "chromium failed on a trivial page: $(tail -5 "$work/control.log")"
[ -n "$(console_errors "$work/control.log")" ] ||
	fail "chromium's console messages are not captured (a deliberate error did not show)"

# 1. A screenshot that is not blank.
browse "$work/shot.out" "$work/shot.log" --screenshot="$work/shot.png" --window-size=1400,3000 \
	"file://$work/report.html" || fail "chromium could not take a screenshot: $(tail -5 "$work/shot.log")"
[ -s "$work/shot.png" ] || fail "chromium wrote no screenshot"
info=$(python3 "$root/tests/browser/png_info.py" "$work/shot.png") || fail "the screenshot: $info"
read -r size colours <<<"$info"
[ "$size" = "1400x3000" ] || fail "the screenshot is $size, not 1400x3000"
[ "$colours" -gt 1 ] || fail "the screenshot is blank ($colours colour)"

# 2. The DOM after load, and the console while loading.
browse "$work/dom.html" "$work/console.log" --enable-logging=stderr --v=0 --dump-dom \
	"file://$work/report.html" || fail "chromium could not load the report: $(tail -5 "$work/console.log")"
grep -q '<svg id="g0-curve-m[0-9]*" class="plot"' "$work/dom.html" ||
	fail "the DOM has no plot <svg> (id g0-curve-m...)"
grep -q '<circle class="pt"' "$work/dom.html" || fail "the plot has no points"
grep -q '<html lang="en" class="js">' "$work/dom.html" || fail "the page's script did not run"
grep -q '&lt;script&gt;console.error(' "$work/dom.html" ||
	fail "the hostile reason is not in the DOM as escaped text"
if grep -q '<img' "$work/dom.html"; then fail "a hostile string became an element"; fi
errors=$(console_errors "$work/console.log")
[ -z "$errors" ] || fail "console errors:
$errors"

# 3. Every result reachable, and the width: a script added to a copy of the
# page presses every "Show the other ... variants" button, counts the rows,
# then opens every shape and measures; its findings go into the DOM.
results=$(python3 -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute(
	"SELECT count(*) FROM results").fetchone()[0])' "$work/test.db")
cp "$work/report.html" "$work/measure.html"
cat >>"$work/measure.html" <<'JS'
<script>
(function(){
var q=function(s){return Array.prototype.slice.call(document.querySelectorAll(s));};
q('button.more').forEach(function(b){b.click();});
var rows=q('table.results tbody tr, table.failed tbody tr').length,left=q('button.more').length;
q('details').forEach(function(d){d.open=true;});
var wide=q('table').filter(function(t){var box=t.parentNode;
 return t.getBoundingClientRect().right>1400||box.scrollWidth>box.clientWidth;});
var p=document.createElement('pre');p.id='measured';
p.textContent='rows '+rows+' buttons '+left+' page '+document.documentElement.scrollWidth+
 ' wide '+wide.length+(wide.length?' first '+(wide[0].id||wide[0].className)+' '+
 Math.round(wide[0].getBoundingClientRect().width)+'px':'');
document.body.appendChild(p);
})();
</script>
JS
browse "$work/measured.html" "$work/measure.log" --enable-logging=stderr --v=0 --dump-dom \
	--window-size=1400,3000 "file://$work/measure.html" ||
	fail "chromium could not load the report to measure it: $(tail -5 "$work/measure.log")"
errors=$(console_errors "$work/measure.log")
[ -z "$errors" ] || fail "console errors once every row is in the tables:
$errors"
measured=$(sed -n 's/.*<pre id="measured">\([^<]*\)<.*/\1/p' "$work/measured.html")
[ -n "$measured" ] || fail "the measuring script left no result"
read -r _ rows _ buttons _ page _ wide _ <<<"$measured"
[ "$buttons" = 0 ] || fail "$buttons buttons left after pressing them all"
[ "$rows" = "$results" ] || fail "the tables hold $rows rows once expanded, the database $results results"
[ "$page" -le 1400 ] || fail "the page is $page px wide in a 1400 px window"
[ "$wide" = 0 ] || fail "tables wider than their box: $measured"
bytes=$(stat -c %s "$work/report.html")
if [ -z "${1:-}" ]; then
	[ "$bytes" -lt 2000000 ] || fail "the example report is $bytes bytes (over 2 MB)"
fi

echo "check_report: ok ($size screenshot, $colours+ colours; plot <svg> in the DOM; no console errors;" \
	"$rows rows = the database's results once expanded; no table over 1400 px; $bytes bytes)"
