#!/usr/bin/env bash
# Stages a build for the lent GPU machine in build-dev/ (gitignored), which
# the device tool carries (carry ["build-dev"]); that machine has no libyaml
# or SQLite, and this build links both statically. Writes three runners
# (and unpack.sh, which starts their databases from a packed compile cache),
# each run there from the repository root, writing into $OUT:
#   bash build-dev/selftest.sh [DIR]  autotune selftest --templates DIR
#                                     (default build-dev/tpl-sel: TEMPLATES);
#                                     its kernels from build-dev/sel-cache.db.xz
#                                     when tools/bench_cache.sh -o sel made one
#   bash build-dev/bench.sh           autotune bench (configs/bench.yaml) and
#                                     the example app at 8 x 1M f32; starts
#                                     from build-dev/bench-cache.db.xz when
#                                     tools/bench_cache.sh made one
#   bash build-dev/ab.sh CONFIG [PARAM]
#                                     sweep --full-timing of build-dev/tpl-ab
#                                     over CONFIG into a fresh database (from
#                                     build-dev/ab-cache.db.xz when
#                                     tools/bench_cache.sh -o ab made one);
#                                     prints the best variant of each
#                                     template (and value of PARAM) per shape
#
#   tools/device_stage.sh [TEMPLATES...] [--ab NAME=FILE.cu...]
#
# TEMPLATES: names (softmax_split ...) for tpl-sel and tpl-ab. --ab
# NAME=FILE.cu puts FILE.cu into tpl-ab as template NAME, with the first
# TEMPLATE's manifest renamed (edit build-dev/tpl-ab/NAME.yaml for other
# values), beside the TEMPLATES: an A/B in one run.
set -euo pipefail
cd "$(dirname "$0")/.."
sel=()
ab=()
while [ $# -gt 0 ]; do
	case "$1" in
	--ab) ab+=("$2"); shift 2 ;;
	*) sel+=("$1"); shift ;;
	esac
done
make -j"$(nproc)" all examples >/dev/null
rm -rf build-dev
mkdir -p build-dev/tpl-sel build-dev/tpl-ab
cp -r build/autotune build/lib build/examples templates configs build-dev/
for dir in build-dev/tpl-sel build-dev/tpl-ab; do
	cp templates/*.cuh "$dir/"
	for t in "${sel[@]}"; do
		cp "templates/$t.cu" "templates/$t.yaml" "$dir/"
	done
done
for spec in "${ab[@]}"; do
	name=${spec%%=*}
	file=${spec#*=}
	[ ${#sel[@]} -gt 0 ] || { echo "device_stage: --ab needs a TEMPLATE for its manifest" >&2; exit 1; }
	cp "$file" "build-dev/tpl-ab/$name.cu"
	sed -e "s/^template: .*/template: $name/" -e "s/^source: .*/source: $name.cu/" \
		"templates/${sel[0]}.yaml" >"build-dev/tpl-ab/$name.yaml"
done
cp tools/ab_best.py build-dev/

cat >build-dev/selftest.sh <<'EOS'
export LD_LIBRARY_PATH=$PWD/build-dev/lib
bash build-dev/unpack.sh sel /tmp/sel.db
timeout 580 build-dev/autotune selftest --templates "${1:-build-dev/tpl-sel}" --db /tmp/sel.db |
	tee "$OUT/selftest.log" | tail -40
EOS
cat >build-dev/unpack.sh <<'EOS'
# unpack.sh NAME DB: a fresh DB, from build-dev/NAME-cache.db.xz when
# tools/bench_cache.sh made one (compiled kernels, no results)
rm -f "$2" "$2-wal" "$2-shm"
[ -f "build-dev/$1-cache.db.xz" ] || exit 0
python3 -c 'import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2], "wb"))' \
	"build-dev/$1-cache.db.xz" "$2"
EOS
cat >build-dev/bench.sh <<'EOS'
export LD_LIBRARY_PATH=$PWD/build-dev/lib
export AUTOTUNE_TEMPLATES=$PWD/build-dev/templates
bash build-dev/unpack.sh bench /tmp/bench.db
build-dev/autotune bench -c build-dev/configs/bench.yaml --db /tmp/bench.db --csv "$OUT/bench.csv" >"$OUT/bench.log" 2>&1
echo "bench rc $?"
tail -4 "$OUT/bench.log"
build-dev/examples/softmax_example --db /tmp/bench.db -M 8 -N 1048576 | tail -3
EOS
cat >build-dev/ab.sh <<'EOS'
# a hung variant costs the watchdog's 5 s, not 20; the database stays there
# (too large to come back), its summary is printed
export LD_LIBRARY_PATH=$PWD/build-dev/lib
bash build-dev/unpack.sh ab /tmp/ab.db
timeout 500 build-dev/autotune sweep --watchdog 5 --full-timing --templates build-dev/tpl-ab \
	-c "$1" --db /tmp/ab.db >"$OUT/ab.log" 2>&1
echo "sweep rc $?; hung variants: $(grep -c hangs "$OUT/ab.log")"
python3 build-dev/ab_best.py /tmp/ab.db $2 | tee "$OUT/ab.txt"
EOS
du -sh build-dev
