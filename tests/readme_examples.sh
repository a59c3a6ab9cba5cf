#!/usr/bin/env bash
# The README's command-line examples, run as written, without a GPU (make
# test runs this). Every line of a ``` block of README.md that starts with
# "build/autotune " runs with bash, in order, in one temporary folder that
# links the checkout's build/, configs/ and results/ and holds autotune.db,
# a copy of results/example/h100-default.db (what `make sweep` leaves on an
# H100). A line must exit 0 within 120 s, except one ending in
# "# needs a GPU": it must exit non-zero saying "no NVIDIA driver found"
# and leave the database it names (--db FILE) as it was; a copy of the
# example database then stands in for what it would have written, so that
# the lines after it run (db merge of the shards). On a machine with a GPU
# driver those lines are skipped: they would tune for minutes.
# The databases of `sweep --compile-only` lines are kept in
# $BUILD/readme-examples/ between runs, so that a second run compiles
# nothing, as a second sweep would not.
# Usage: tests/readme_examples.sh [README]   ($BUILD: the build folder,
# default build). Exits 0 when every example behaved as the README says.
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
readme=${1:-$root/README.md}
build=$(cd "$root/${BUILD:-build}" 2>/dev/null && pwd) || { echo "readme_examples: no build folder: run make" >&2; exit 1; }
example=$root/results/example/h100-default.db
keep=$build/readme-examples
[ -x "$build/autotune" ] || { echo "readme_examples: $build/autotune is missing: run make" >&2; exit 1; }
[ -f "$readme" ] || { echo "readme_examples: $readme: no such file" >&2; exit 1; }

work=$(mktemp -d /tmp/readme_examples.XXXXXX)
trap 'rm -rf "$work"' EXIT
ln -s "$build" "$work/build"
ln -s "$root/configs" "$work/configs"
ln -s "$root/results" "$work/results"
cp "$example" "$work/autotune.db"
mkdir -p "$keep"

# A driver here means the GPU lines would really run.
gpu=0
python3 -c 'import ctypes; ctypes.CDLL("libcuda.so.1")' 2>/dev/null && gpu=1

# The examples: "LINE<tab>COMMAND", from the fenced blocks only.
examples=$(awk '/^```/ { inside = !inside; next }
	inside && /^build\/autotune / { printf "%d\t%s\n", NR, $0 }' "$readme")
count=$(printf '%s\n' "$examples" | grep -c . || true)
# the README shows at least its dozen commands: fewer means the parsing broke
[ "$count" -ge 12 ] || { echo "readme_examples: only $count examples found in $readme" >&2; exit 1; }

digest() { [ -f "$1" ] && sha256sum <"$1" || echo absent; }

failed=0 ran=0 skipped=0
fail() {
	echo "readme_examples: FAIL: $(basename "$readme"):$1: $2" >&2
	echo "  \$ $3" >&2
	sed 's/^/  | /' "$work/.out" | tail -8 >&2
	failed=$((failed + 1))
}

while IFS=$'\t' read -r line cmd; do
	case $cmd in *\\) fail "$line" "a continued line: write examples on one line" "$cmd"; continue ;; esac
	db=$(sed -n 's/.*--db \([^ ]*\).*/\1/p' <<<"$cmd")
	if [[ $cmd =~ \#\ needs\ a\ GPU[[:space:]]*$ ]]; then
		if [ $gpu = 1 ]; then
			skipped=$((skipped + 1))
			continue
		fi
		before=$(cd "$work" && digest "${db:-/nonexistent}")
		(cd "$work" && timeout 120 bash -c "$cmd") >"$work/.out" 2>&1
		rc=$?
		ran=$((ran + 1))
		if [ $rc = 0 ] || ! grep -q "no NVIDIA driver found" "$work/.out"; then
			fail "$line" "exit $rc without a GPU, expected a failure saying \"no NVIDIA driver found\"" "$cmd"
		elif [ -n "$db" ] && [ "$(cd "$work" && digest "$db")" != "$before" ]; then
			fail "$line" "wrote $db without a GPU" "$cmd"
		elif [ -n "$db" ] && [ ! -e "$work/$db" ]; then
			cp "$example" "$work/$db" # what the sweep would have written
		fi
		continue
	fi
	compile_only=0
	[[ $cmd == *--compile-only* && -n $db ]] && compile_only=1
	[ $compile_only = 1 ] && [ -f "$keep/$db" ] && cp "$keep/$db" "$work/$db"
	(cd "$work" && timeout 120 bash -c "$cmd") >"$work/.out" 2>&1
	rc=$?
	ran=$((ran + 1))
	if [ $rc != 0 ]; then
		fail "$line" "exit $rc" "$cmd"
	elif [ $compile_only = 1 ]; then
		cp "$work/$db" "$keep/$db"
	fi
done <<<"$examples"

if [ $failed != 0 ]; then
	echo "readme_examples: $failed of $count examples failed" >&2
	exit 1
fi
note=""
[ $skipped = 0 ] || note=", $skipped needing a GPU skipped: a driver is here"
echo "readme_examples: ok ($ran of $count examples run as written$note)"
