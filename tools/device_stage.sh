#!/usr/bin/env bash
# Stages a build for the lent GPU machine in build-dev/ (gitignored), which
# the device tool carries (carry ["build-dev"]); that machine has no libyaml
# or SQLite, and this build links both statically. At most 8 files come back
# from $OUT: a call that writes more (several runners, or one peer run per
# op and database) puts them in a folder and tars it (session 62 lost 8). Writes three runners
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
#   bash build-dev/sweep.sh [--warm]  the default sweep (configs/softmax.yaml)
#                                     cold, then again warm (its compile
#                                     cache kept, the results dropped); the
#                                     database without its compile cache to
#                                     $OUT/default.db.xz (xz: under the device
#                                     tool's 16 MiB a file) and /tmp/default.db
#   bash build-dev/family-sweep.sh [--resume]
#                                     `make sweep` as a fresh machine runs it:
#                                     the four family configs in order into
#                                     one new /tmp/family.db, each timed, with
#                                     AUTOTUNE_PHASES=1 (phases summed a
#                                     config); --resume: on after a cut, the
#                                     database kept: $OUT/family-*.log and
#                                     $OUT/family.db.xz
#   bash build-dev/peers.sh           sweep configs/generalization.yaml (from
#                                     build-dev/gen-cache.db.xz when
#                                     tools/bench_cache.sh -c
#                                     configs/generalization.yaml -o gen made
#                                     one), then python -m autotune_dispatch.peers
#                                     against /tmp/default.db:
#                                     $OUT/generalization.csv, and the first
#                                     call's cost
#   bash build-dev/seeds.sh           the seeds' benchmark (configs/seeds-
#                                     benchmark.yaml, 196 shapes at M = 4096):
#                                     the sweep (a reduced timing budget:
#                                     build-dev/seeds-fast.yaml; from
#                                     build-dev/seeds-cache.db.xz when
#                                     tools/bench_cache.sh -c
#                                     configs/seeds-benchmark.yaml -o seeds made
#                                     one), the peers under both L2 conditions,
#                                     the report with --peers: $OUT/seeds-*;
#                                     run again after a cut, it resumes
#   bash build-dev/python-gpu-test.sh the Python package's GPU tests
#   bash build-dev/random-peers.sh SEED [SWEEP_S]
#                                     40 shapes drawn from SEED, swept
#                                     exhaustively, the library against
#                                     their exact winners and the peers:
#                                     $OUT/random-peers.csv; a cut sweep
#                                     resumes with build-dev/random-exact.db.xz
#   bash build-dev/ce-sweep.sh        the cross-entropy sweep into a fresh
#                                     /tmp/default.db (ops-peers.sh's):
#                                     $OUT/cross-entropy.db.xz
#   bash build-dev/first-call.sh [SHAPES [CONFIG]]
#                                     the first call of untuned shapes in each
#                                     JIT and tuning mode (peers --first-call,
#                                     the library database): $OUT/first-call.csv
#   bash build-dev/ce-profile.sh [ARGS...]
#                                     tools/ce_call_profile.py ARGS: a
#                                     cross-entropy call's kernels (--host:
#                                     its Python) with the committed library
#                                     database: $OUT/ce-call-profile.log
#   bash build-dev/lib-with.sh [--keep-models] DB OP...
#                                     /tmp/default.db = the committed library
#                                     database with OPs' results, winners,
#                                     kernels (and models, unless
#                                     --keep-models) from DB, a sweep run
#                                     there (--keep-models: an A/B of code)
#   bash build-dev/ops-peers.sh OP [ARGS...]
#                                     python -m autotune_dispatch.peers --op OP
#                                     ARGS (softmax_backward,
#                                     log_softmax_backward, cross_entropy, ...)
#                                     against the H200's default database,
#                                     Liger-Kernel from the carried .whl/
#                                     (tools/fetch_peer_wheels.sh; carry
#                                     [".whl", "build-dev"]): $OUT/OP-peers.csv
#                                     and .log; run again after a cut, it
#                                     resumes
#   bash build-dev/kernel-durations.sh [--stalls] OP DTYPE:M:N...
#                                     tools/kernel_durations.py under ncu:
#                                     each shape's kernels through the
#                                     library and torch.compile (OP
#                                     cross_entropy: the loss and its
#                                     backward, every kernel of the call), their
#                                     durations alone (caches flushed), the
#                                     library database:
#                                     $OUT/kernel-durations.log; --stalls:
#                                     each launch's instructions and warp
#                                     stall reasons, $OUT/kernel-stalls.*
#   bash build-dev/train-step.sh [ARGS...]
#                                     tools/train_step.py ARGS (GPT-2 small,
#                                     one training step per loss variant; .whl
#                                     carried as for ops-peers.sh):
#                                     $OUT/train-step-h200.csv and .log
#   bash build-dev/resweep.sh MAX_N     the H200 default database with its
#                                     shapes of N <= MAX_N swept again (a
#                                     new template serves them):
#                                     $OUT/default.db.xz
#   bash build-dev/tiny-peers.sh [SEED [DB TAG]]
#                                     launch-bound shapes (configs/tiny.yaml
#                                     and 30 drawn from SEED) against
#                                     torch.softmax, Triton and a copy:
#                                     $OUT/tiny-*.csv
#   bash build-dev/variant-bench.sh SPEC
#                                     tools/variant_bench.py: chosen variants
#                                     (SPEC, one a line) beside torch, Triton
#                                     and a copy under the peer benchmark's
#                                     clean and dirty L2: $OUT/variant-bench.*
#   bash build-dev/ce-variant-bench.sh SPEC
#                                     tools/ce_variant_bench.py: cross-entropy
#                                     variants, each from a templates folder
#                                     (build-dev/templates; an old one copied
#                                     beside it for an A/B), beside a copy:
#                                     $OUT/ce-variant-bench.*
#   bash build-dev/op-sweep.sh CONFIG /tmp/NAME.db NAME --exhaustive
#                                     `sweep --exhaustive` of CONFIG into a
#                                     fresh /tmp/NAME.db (its kernels from
#                                     build-dev/NAME-cache.db.xz when
#                                     tools/bench_cache.sh -c CONFIG
#                                     --exhaustive -o NAME made one: 776
#                                     variants of 12 long-row backward shapes
#                                     took 23 s that way on the H200), each shape's
#                                     winner printed; $OUT/NAME.db.xz
#   bash build-dev/ab.sh CONFIG [PARAM]
#                                     sweep --full-timing --exhaustive of
#                                     build-dev/tpl-ab over CONFIG into a
#                                     fresh database (from
#                                     build-dev/ab-cache.db.xz when
#                                     tools/bench_cache.sh -c CONFIG
#                                     --templates build-dev/tpl-ab -o ab
#                                     --exhaustive made one); prints the best
#                                     variant of each template (and value of
#                                     PARAM) per shape; AB_BASE=TEMPLATE: each
#                                     template against it, params by params
#                                     (tools/ab_pairs.py)
#
#   bash build-dev/lib-ab.sh OP ROUNDS NAME=DB[,LIB]... -- PEERS_ARGS...
#                                     the library served from each database
#                                     (NAME=FILE, .xz unpacked, e.g. head=
#                                     results/h200/library-h200.db.xz; with
#                                     ,LIB by that build of the library, e.g.
#                                     HEAD's when the manifests changed) in turn,
#                                     round after round (A B A B: the order
#                                     of the runs does not decide), `peers
#                                     --op OP --methods lib,copy --reps 20
#                                     PEERS_ARGS` each (LIB_AB_METHODS for
#                                     other methods): $OUT/lib-ab-OP.tgz of
#                                     NAME-ROUND.csv; then tools/peers_ab.py
#                                     A-1.csv,A-2.csv B-1.csv,B-2.csv
#
#   tools/device_stage.sh [TEMPLATES...] [--ab NAME=FILE.cu...]
#
# TEMPLATES: names (softmax_split ...) for tpl-sel and tpl-ab. --ab
# NAME=FILE.cu puts FILE.cu into tpl-ab as template NAME, with the manifest
# of the template FILE is named after (an old softmax_warp.cu gets
# softmax_warp.yaml), else the first TEMPLATE's, renamed (edit
# build-dev/tpl-ab/NAME.yaml for other values), beside the TEMPLATES: an
# A/B in one run.
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
mkdir -p build-dev
cp -r build/autotune build/lib build/examples templates configs build-dev/
# the static library serves nothing there (the examples are linked here), and
# its 4 MB took the tree, build-dev and the Liger wheel past the device
# tool's 64 MiB
rm -f build-dev/lib/*.a
# symbols stripped: 3 MB less of the 64 MiB (the tracked tree is ~54)
strip build-dev/autotune build-dev/lib/libautotune-dispatch.so.* build-dev/examples/*
# the selected templates' folders, only when some are named
[ ${#sel[@]} -eq 0 ] || for dir in build-dev/tpl-sel build-dev/tpl-ab; do
	mkdir -p "$dir"
	cp templates/*.cuh "$dir/"
	for t in "${sel[@]}"; do
		cp "templates/$t.cu" "templates/$t.yaml" "$dir/"
	done
done
for spec in "${ab[@]}"; do
	name=${spec%%=*}
	file=${spec#*=}
	[ ${#sel[@]} -gt 0 ] || { echo "device_stage: --ab needs a TEMPLATE for its manifest" >&2; exit 1; }
	base=$(basename "$file" .cu)
	[ -f "templates/$base.yaml" ] || base=${sel[0]}
	cp "$file" "build-dev/tpl-ab/$name.cu"
	sed -e "s/^template: .*/template: $name/" -e "s/^source: .*/source: $name.cu/" \
		"templates/$base.yaml" >"build-dev/tpl-ab/$name.yaml"
done
cp tools/ab_best.py tools/ab_pairs.py build-dev/

cat >build-dev/selftest.sh <<'EOS'
export LD_LIBRARY_PATH=$PWD/build-dev/lib
bash build-dev/unpack.sh sel /tmp/sel.db
timeout 580 build-dev/autotune selftest --templates "${1:-build-dev/tpl-sel}" --db /tmp/sel.db |
	tee "$OUT/selftest.log" | tail -40
EOS
cat >build-dev/pack.sh <<'EOS'
# pack.sh DB OUT.xz: DB without its compile cache (the kernels of every
# variant: too large to come back), xz-compressed into OUT.xz
rm -f "$1-small"
python3 -c 'import sqlite3, sys; sqlite3.connect(sys.argv[1]).execute("VACUUM INTO ?", (sys.argv[2],))' "$1" "$1-small"
python3 -c 'import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.execute("DELETE FROM compile_cache"); c.commit(); c.execute("VACUUM")' "$1-small"
xz -T0 -6 -c "$1-small" >"$2"
rm -f "$1-small"
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
cat >build-dev/phases.sh <<'EOS'
# sourced by the sweep runners
phases() { # LOG: the sum of each phase over the shapes, in ms
	[ "${AUTOTUNE_PHASES:-}" = 1 ] || return 0
	awk '/^phases/ { for (i = 9; i < NF; i += 2) sum[$i] += $(i + 1) }
		END { printf "%s phases (ms):", FILENAME; n = split("ref data load check quick finish baselines store", k, " ");
			for (j = 1; j <= n; j++) printf " %s %.0f", k[j], sum[k[j]]; print "" }' "$1"
}
EOS
cat >build-dev/family-sweep.sh <<'EOS'
. build-dev/phases.sh
export LD_LIBRARY_PATH=$PWD/build-dev/lib AUTOTUNE_PHASES=1
[ "${1:-}" = --resume ] || rm -f /tmp/family.db*
total=$(date +%s)
for c in softmax log_softmax softmax_backward cross_entropy; do
	s=$(date +%s)
	left=$(( 585 - (s - total) ))
	[ $left -gt 10 ] || { echo "$c: no time left (run again with --resume)"; break; }
	timeout $left build-dev/autotune sweep --templates build-dev/templates -c "build-dev/configs/$c.yaml" \
		--db /tmp/family.db >>"$OUT/family-$c.log" 2>&1
	echo "$c sweep rc $? in $(( $(date +%s) - s )) s"; tail -3 "$OUT/family-$c.log"
	phases "$OUT/family-$c.log"
done
echo "family sweep: $(( $(date +%s) - total )) s"
bash build-dev/pack.sh /tmp/family.db "$OUT/family.db.xz"
EOS
cat >build-dev/sweep.sh <<'EOS'
# cold: an empty database; warm: the same database with its results and
# winners dropped, its compile cache kept. --warm: the warm sweep alone,
# from build-dev/default-cache.db.xz (tools/bench_cache.sh -c
# configs/softmax.yaml -o default: 20.5 MB, 42 min on 2 cores here; with
# the tracked tree it fits the device tool's 64 MiB only without
# build-dev/gen-cache.db.xz, so peers.sh then compiles the generalization
# sweep itself, 140 s), a few minutes of device time fewer. With AUTOTUNE_PHASES=1 each log's
# per-shape phases are summed.
export LD_LIBRARY_PATH=$PWD/build-dev/lib
. build-dev/phases.sh
if [ "$1" = --warm ]; then
	bash build-dev/unpack.sh default /tmp/default-warm.db
	[ -f /tmp/default-warm.db ] || { echo "sweep.sh: no build-dev/default-cache.db.xz"; exit 1; }
	s=$(date +%s)
	timeout 300 build-dev/autotune sweep --templates build-dev/templates -c build-dev/configs/softmax.yaml \
		--db /tmp/default-warm.db >"$OUT/sweep-warm.log" 2>&1
	echo "warm sweep rc $? in $(( $(date +%s) - s )) s"; tail -2 "$OUT/sweep-warm.log"
	phases "$OUT/sweep-warm.log"
	exit 0
fi
rm -f /tmp/default.db*
s=$(date +%s)
timeout 560 build-dev/autotune sweep --templates build-dev/templates -c build-dev/configs/softmax.yaml \
	--db /tmp/default.db >"$OUT/sweep-cold.log" 2>&1
echo "cold sweep rc $? in $(( $(date +%s) - s )) s"; tail -2 "$OUT/sweep-cold.log"
phases "$OUT/sweep-cold.log"
python3 - <<'EOP'
import sqlite3, os
c = sqlite3.connect("/tmp/default.db")
c.execute("VACUUM INTO '/tmp/default-warm.db'")
c.close()
w = sqlite3.connect("/tmp/default-warm.db")
w.executescript("DELETE FROM kernels; DELETE FROM winners; DELETE FROM results; DELETE FROM sweeps;")
w.commit(); w.close()
EOP
s=$(date +%s)
timeout 300 build-dev/autotune sweep --templates build-dev/templates -c build-dev/configs/softmax.yaml \
	--db /tmp/default-warm.db >"$OUT/sweep-warm.log" 2>&1
echo "warm sweep rc $? in $(( $(date +%s) - s )) s"; tail -2 "$OUT/sweep-warm.log"
phases "$OUT/sweep-warm.log"
bash build-dev/pack.sh /tmp/default.db "$OUT/default.db.xz"
EOS
cat >build-dev/variant-bench.sh <<'EOS'
export LD_LIBRARY_PATH=$PWD/build-dev/lib PYTHONUNBUFFERED=1
PYTHONPATH=python python3 tools/variant_bench.py "$@" --csv "$OUT/variant-bench.csv" 2>&1 |
	grep -v -i warn | tee "$OUT/variant-bench.log"
EOS
cat >build-dev/ce-variant-bench.sh <<'EOS'
export LD_LIBRARY_PATH=$PWD/build-dev/lib PYTHONUNBUFFERED=1
PYTHONPATH=python python3 tools/ce_variant_bench.py "$1" --csv "$OUT/ce-variant-bench.csv" 2>&1 |
	grep -v -i warn | tee "$OUT/ce-variant-bench.log"
EOS
cat >build-dev/peers.sh <<'EOS'
# peers.sh [SLICE [--first-call]]: SLICE of the generalization shapes (e.g.
# 0:11; default all); the default database from build-dev/sweep.sh, else
# build-dev/default.db (a copy of its $OUT/default.db) or build-dev/default.db.xz, else
# results/example/h100-default.db (the tracked tree and a carried default.db
# together can pass the device tool's 64 MiB), swept again for any shape the
# grid gained
export LD_LIBRARY_PATH=$PWD/build-dev/lib PYTHONUNBUFFERED=1
[ -f /tmp/default.db ] || cp build-dev/default.db /tmp/default.db 2>/dev/null ||
	{ [ -f build-dev/default.db.xz ] && xz -dc build-dev/default.db.xz >/tmp/default.db; } ||
	cp results/example/h100-default.db /tmp/default.db 2>/dev/null ||
	{ echo "peers.sh: run build-dev/sweep.sh first (no /tmp/default.db)"; exit 1; }
timeout 300 build-dev/autotune sweep --templates build-dev/templates -c build-dev/configs/softmax.yaml \
	--db /tmp/default.db >"$OUT/default-resweep.log" 2>&1
echo "default sweep (resumed) rc $?"; tail -1 "$OUT/default-resweep.log"
bash build-dev/pack.sh /tmp/default.db "$OUT/default.db.xz"
if [ ! -f /tmp/gen.db ]; then
	bash build-dev/unpack.sh gen /tmp/gen.db
	timeout 200 build-dev/autotune sweep --templates build-dev/templates \
		-c build-dev/configs/generalization.yaml --db /tmp/gen.db >"$OUT/gen-sweep.log" 2>&1
	echo "generalization sweep rc $?"; tail -1 "$OUT/gen-sweep.log"
fi
export ATD_JIT_CACHE=/tmp/peers-jit.db
PYTHONPATH=python python3 -m autotune_dispatch.peers --lib build-dev/lib/libautotune-dispatch.so \
	--db /tmp/default.db --exact-db /tmp/gen.db --shapes "${1:-:}" --csv "$OUT/generalization.csv" 2>&1 |
	grep --line-buffered -v -e "^Online softmax" -e "^split the reduction" -e "^important use case" \
		-e "^softmax\.$" -e "warnings.warn" -e "UserWarning" | tee "$OUT/peers.log" | tail -40
if [ "$2" = --first-call ]; then
	PYTHONPATH=python python3 -m autotune_dispatch.peers --lib build-dev/lib/libautotune-dispatch.so \
		--db /tmp/default.db --first-call 2>&1 | tee "$OUT/first-call.csv"
fi
EOS
# The seeds' shapes with a reduced timing budget, so that sweep and peers
# fit one 10-minute call on the H100; the report shows this config.
{
	echo "# configs/seeds-benchmark.yaml with a reduced timing budget (build-dev/seeds.sh)"
	echo "warmup: 3"
	echo "repetitions: 30"
	echo "min_repetitions: 5"
	echo "time_budget_ms: 2"
	grep -v '^#' configs/seeds-benchmark.yaml
} >build-dev/seeds-fast.yaml
cat >build-dev/seeds.sh <<'EOS'
# seeds.sh: the sweep into /tmp/seeds.db (resumes), the peers into
# /tmp/seeds-peers.csv (resumes: shapes it has are skipped), the report;
# what comes back: $OUT/seeds-report.html, seeds-peers.csv, seeds-sweep.log,
# seeds-peers.log, seeds.db.xz (the database without its compile cache).
# SWEEP_S and PEERS_S bound the two parts (default 300 and 250 s).
export LD_LIBRARY_PATH=$PWD/build-dev/lib PYTHONUNBUFFERED=1 ATD_JIT_CACHE=/tmp/seeds-jit.db \
	PYTHONPATH=python
[ -f /tmp/seeds.db ] || bash build-dev/unpack.sh seeds /tmp/seeds.db
s=$(date +%s)
timeout "${SWEEP_S:-300}" build-dev/autotune sweep --templates build-dev/templates \
	-c build-dev/seeds-fast.yaml --db /tmp/seeds.db >>/tmp/seeds-sweep.log 2>&1
rc=$?
cp /tmp/seeds-sweep.log "$OUT/seeds-sweep.log"
echo "seeds sweep rc $rc in $(( $(date +%s) - s )) s"; tail -2 /tmp/seeds-sweep.log
if [ $rc -ne 0 ]; then
	echo "seeds.sh: the sweep did not finish: run build-dev/seeds.sh again (it resumes)"
	exit 1
fi
s=$(date +%s)
timeout "${PEERS_S:-250}" python3 -m autotune_dispatch.peers --lib build-dev/lib/libautotune-dispatch.so \
	--db /tmp/seeds.db -c configs/seeds-benchmark.yaml --methods lib,torch,triton,compile,copy \
	--reps 30 --warmup 3 --resume --csv /tmp/seeds-peers.csv >>/tmp/seeds-peers.log 2>/tmp/seeds-peers.err
rc=$?
cp /tmp/seeds-peers.log "$OUT/seeds-peers.log"
cp /tmp/seeds-peers.csv "$OUT/seeds-peers.csv"
echo "peers rc $rc in $(( $(date +%s) - s )) s, $(( $(wc -l </tmp/seeds-peers.csv) - 1 )) rows of 1960"
tail -4 /tmp/seeds-peers.log
if [ $rc -ne 0 ]; then
	grep -v -e Warning -e warn /tmp/seeds-peers.err | tail -5
	echo "seeds.sh: the peers did not finish: run build-dev/seeds.sh again (it resumes)"
	exit 1
fi
build-dev/autotune report --db /tmp/seeds.db --peers /tmp/seeds-peers.csv -o "$OUT/seeds-report.html" &&
	python3 -c 'import re, sys; [print(re.sub("<[^>]+>", "", p)) for p in
		re.findall(r"<p id=.g[0-9]+-peers.*?</p>", open(sys.argv[1]).read())]' "$OUT/seeds-report.html"
rm -f /tmp/seeds-small.db
bash build-dev/pack.sh /tmp/seeds.db "$OUT/seeds.db.xz"
ls -l "$OUT"
EOS
cat >build-dev/first-call.sh <<'EOS'
# first-call.sh [SHAPES [CONFIG]]: the first call of untuned shapes (the
# CONFIG's first SHAPES, default 6 of configs/generalization.yaml) in each
# JIT and tuning mode, with the library database and its models:
# $OUT/first-call.csv. NVRTC (12.9+) keeps what it compiled in the driver's
# compute cache when it finds a driver: a mode would find the kernels an
# earlier mode compiled. Off, so that every mode's compile is a compile.
export LD_LIBRARY_PATH=$PWD/build-dev/lib PYTHONUNBUFFERED=1 CUDA_CACHE_DISABLE=1
xz -dc results/h200/library-h200.db.xz >/tmp/lib.db
PYTHONPATH=python python3 -m autotune_dispatch.peers --lib build-dev/lib/libautotune-dispatch.so \
	--db /tmp/lib.db --first-call --first-call-shapes "${1:-6}" --config "${2:-configs/generalization.yaml}" \
	2>&1 | grep -v -i warn | tee "$OUT/first-call.csv"
EOS
cat >build-dev/random-peers.sh <<'EOS'
# random-peers.sh SEED [SWEEP_S]: issue 35's measurement on shapes nobody
# tuned: 40 drawn by tools/random_shapes.py from SEED (draw it at
# measurement time), swept exhaustively for their exact winners (cut at
# SWEEP_S, default 260 s; a shape not reached has none), then the library
# with its database (results/h200/library-h200.db.xz) against them and the
# peers, both L2 conditions: $OUT/random.yaml, random-sweep.log,
# random-exact.db.xz, random-peers.csv and .log; run again with
# build-dev/random-exact.db.xz (a copy of $OUT's), it resumes the sweep
# where it was cut (SWEEP_S 0: not at all), and with
# build-dev/random-peers.csv the peers too
export LD_LIBRARY_PATH=$PWD/build-dev/lib PYTHONUNBUFFERED=1
seed=${1:?a seed}
python3 tools/random_shapes.py --seed "$seed" --count 40 >"$OUT/random.yaml"
xz -dc results/h200/library-h200.db.xz >/tmp/lib.db
[ -f build-dev/random-exact.db.xz ] && xz -dc build-dev/random-exact.db.xz >/tmp/exact.db
if [ "${2:-260}" != 0 ]; then
	timeout "${2:-260}" build-dev/autotune sweep --templates build-dev/templates -c "$OUT/random.yaml" \
		--db /tmp/exact.db --exhaustive >"$OUT/random-sweep.log" 2>&1
	echo "exhaustive sweep rc $?"; tail -3 "$OUT/random-sweep.log"
	bash build-dev/pack.sh /tmp/exact.db "$OUT/random-exact.db.xz"
fi
[ -f build-dev/random-peers.csv ] && cp build-dev/random-peers.csv "$OUT/random-peers.csv"
timeout 300 env PYTHONPATH=python python3 -m autotune_dispatch.peers --lib build-dev/lib/libautotune-dispatch.so \
	--db /tmp/lib.db --exact-db /tmp/exact.db -c "$OUT/random.yaml" --resume \
	--methods lib,lib_nodb,lib_exact,torch,triton,compile,copy --csv "$OUT/random-peers.csv" 2>&1 |
	grep --line-buffered -v -i -e warn | tee "$OUT/random-peers.log" | tail -25
EOS
cat >build-dev/python-gpu-test.sh <<'EOS'
# the Python package's GPU tests (python/tests/test_gpu.py) with this build's
# library, the default handle deriving from the seed winners (no database)
export LD_LIBRARY_PATH=$PWD/build-dev/lib ATD_JIT_CACHE=/tmp/gpu-test-jit.db
AUTOTUNE_DISPATCH_LIB=$PWD/build-dev/lib/libautotune-dispatch.so ATD_REQUIRE_GPU=1 PYTHONPATH=python \
	timeout 500 python3 -m unittest discover -s python/tests -p 'test_gpu*.py' -v 2>&1 |
	tee "$OUT/python-gpu-test.log" | tail -40
EOS
cat >build-dev/resweep.sh <<'EOS'
# resweep.sh MAX_N: the H200 default sweep's database (results/h200/
# default-h200.db.xz, or /tmp/default.db) with its shapes of N <= MAX_N
# dropped (a new template serves them), then configs/softmax.yaml swept
# into it (resumed: the dropped shapes and any the grid gained; MAX_N 0
# drops none; SWEEP_ARGS=--exhaustive times every variant):
# /tmp/default.db, and without its compile cache $OUT/default.db.xz
export LD_LIBRARY_PATH=$PWD/build-dev/lib
[ -f /tmp/default.db ] || xz -dc results/h200/default-h200.db.xz >/tmp/default.db
python3 - "${1:?resweep.sh MAX_N}" <<'EOP'
import sqlite3, sys
c = sqlite3.connect("/tmp/default.db")
gone = "SELECT id FROM results WHERE op = 'softmax' AND n <= ?"
for t, where in (("winners", "op = 'softmax' AND n <= ?"), ("kernels", f"result_id IN ({gone})"),
                 ("results", "op = 'softmax' AND n <= ?")):
    n = c.execute(f"DELETE FROM {t} WHERE {where}", (int(sys.argv[1]),)).rowcount
    print(f"dropped {n} {t} of N <= {sys.argv[1]}")
c.commit()
EOP
s=$(date +%s)
timeout "${SWEEP_S:-300}" build-dev/autotune sweep --templates build-dev/templates \
	-c build-dev/configs/softmax.yaml --db /tmp/default.db $SWEEP_ARGS >"$OUT/resweep.log" 2>&1
echo "resweep rc $? in $(( $(date +%s) - s )) s"; tail -2 "$OUT/resweep.log"
bash build-dev/pack.sh /tmp/default.db "$OUT/default.db.xz"
EOS
cat >build-dev/tiny-peers.sh <<'EOS'
# tiny-peers.sh [SEED [DB TAG]]: launch-bound shapes, configs/tiny.yaml and
# 30 drawn by tools/random_shapes.py --max-bytes 65536 from SEED (default:
# the time; never tune on them), the library with DB (default the H200
# default sweep's, /tmp/default.db: no model, the manifests' derivation)
# against torch.softmax, Triton and a copy: $OUT/tiny-random.yaml,
# tiny[TAG]-peers.csv, tiny-random[TAG]-peers.csv
export LD_LIBRARY_PATH=$PWD/build-dev/lib PYTHONUNBUFFERED=1 ATD_JIT_CACHE=/tmp/tiny-jit.db \
	PYTHONPATH=python
[ -f /tmp/default.db ] || xz -dc results/h200/default-h200.db.xz >/tmp/default.db
seed=${1:-$(date +%s)}
[ -f "$OUT/tiny-random.yaml" ] ||
	python3 tools/random_shapes.py --seed "$seed" --count 30 --max-bytes 65536 >"$OUT/tiny-random.yaml"
for c in configs/tiny.yaml "$OUT/tiny-random.yaml"; do
	python3 -m autotune_dispatch.peers --lib build-dev/lib/libautotune-dispatch.so \
		--db "${2:-/tmp/default.db}" -c "$c" --methods lib,torch,triton,copy \
		--csv "$OUT/$(basename "$c" .yaml)$3-peers.csv" 2>&1 | grep -v -i warn | tail -3
done
EOS
cat >build-dev/ab.sh <<'EOS'
# a hung variant costs the watchdog's 5 s, not 20; the database stays there
# (too large to come back), its summary is printed. AB_TIMING=rounds: the
# sweep's own rounds instead of --full-timing (the fastest variants timed
# interleaved, on one time base: differences of a few % between templates
# are not clock drift); AB_FLUSH=write: do_bench's dirty L2; AB_DB: the
# database (default /tmp/ab.db; one that exists keeps its compile cache,
# its results dropped)
export LD_LIBRARY_PATH=$PWD/build-dev/lib
db=${AB_DB:-/tmp/ab.db}
if [ -f "$db" ]; then
	python3 -c 'import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.executescript("DELETE FROM kernels; DELETE FROM winners; DELETE FROM results; DELETE FROM sweeps;"); c.commit()' "$db"
else
	bash build-dev/unpack.sh ab "$db"
fi
timing=--full-timing
[ "$AB_TIMING" = rounds ] && timing=
# --exhaustive: every variant of every template (without it the model's
# few, which know nothing of a renamed copy)
AUTOTUNE_FLUSH=${AB_FLUSH:-clean} timeout 500 build-dev/autotune sweep --watchdog 5 $timing --exhaustive \
	--templates build-dev/tpl-ab -c "$1" --db "$db" >"$OUT/ab${AB_FLUSH:+-$AB_FLUSH}.log" 2>&1
echo "sweep rc $?; hung variants: $(grep -c hangs "$OUT/ab${AB_FLUSH:+-$AB_FLUSH}.log")"
python3 build-dev/ab_best.py "$db" $2 | tee "$OUT/ab${AB_FLUSH:+-$AB_FLUSH}.txt"
[ -z "${AB_BASE:-}" ] || python3 build-dev/ab_pairs.py "$db" "$AB_BASE" | tee -a "$OUT/ab${AB_FLUSH:+-$AB_FLUSH}.txt"
EOS
cat >build-dev/wheels.sh <<'EOS'
# sourced by the runners: the carried wheels (.whl/, tools/fetch_peer_wheels.sh)
# into /tmp/site, ahead on PYTHONPATH; without them Liger's rows say unavailable
if ls .whl/*.whl >/dev/null 2>&1; then
	python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
		--target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH ||
		echo "wheels.sh: the wheels in .whl/ did not install"
else
	echo "wheels.sh: no .whl/ carried (tools/fetch_peer_wheels.sh, carry [\".whl\", \"build-dev\"])"
fi
export PYTHONPATH=$PWD/python:$PYTHONPATH
# the H200's default sweep (the lib method's database), unless a sweep left one
[ -f /tmp/default.db ] || xz -dc results/h200/pruned-default-h200.db.xz >/tmp/default.db
EOS
cat >build-dev/op-sweep.sh <<'EOS'
# op-sweep.sh CONFIG DB NAME [ARGS...]: a sweep of CONFIG (a path, else a
# file of build-dev/configs) into a fresh DB, its kernels from
# build-dev/NAME-cache.db.xz when tools/bench_cache.sh made one (ARGS to
# sweep, e.g. --exhaustive), its models fitted and stored: $OUT/NAME.db.xz
# and NAME-sweep.log
export LD_LIBRARY_PATH=$PWD/build-dev/lib
config=${1:?"op-sweep.sh CONFIG DB NAME [ARGS...]"} db=${2:?} name=${3:?}
shift 3
[ -f "$config" ] || config=build-dev/configs/$config
bash build-dev/unpack.sh "$name" "$db"
s=$(date +%s)
timeout 540 build-dev/autotune sweep --templates build-dev/templates -c "$config" \
	--db "$db" "$@" >"$OUT/$name-sweep.log" 2>&1
echo "$name sweep rc $? in $(( $(date +%s) - s )) s"
grep -E '^\[' "$OUT/$name-sweep.log" | tail -n 40
tail -3 "$OUT/$name-sweep.log"
bash build-dev/pack.sh "$db" "$OUT/$name.db.xz"
EOS
cat >build-dev/ce-sweep.sh <<'EOS'
# ce-sweep.sh: the cross-entropy sweep into a fresh /tmp/default.db (which
# ops-peers.sh then serves from): $OUT/cross-entropy.db.xz, cross-entropy-sweep.log
bash build-dev/op-sweep.sh cross_entropy.yaml /tmp/default.db cross-entropy "$@"
EOS
cat >build-dev/lib-ab.sh <<'EOS'
# lib-ab.sh OP ROUNDS NAME=DB[,LIB]... -- PEERS_ARGS...: see device_stage.sh
export LD_LIBRARY_PATH=$PWD/build-dev/lib PYTHONUNBUFFERED=1 ATD_JIT_CACHE=/tmp/lib-ab-jit.db
op=${1:?"lib-ab.sh OP ROUNDS NAME=DB[,LIB]... -- PEERS_ARGS..."} rounds=${2:?}
shift 2
names=()
declare -A libs
while [ $# -gt 0 ] && [ "$1" != -- ]; do
	name=${1%%=*} file=${1#*=}
	libs[$name]=build-dev/lib/libautotune-dispatch.so
	case "$file" in
	*,*) libs[$name]=${file#*,} file=${file%%,*} ;;
	esac
	case "$file" in
	*.xz) xz -dc "$file" >"/tmp/lib-ab-$name.db" ;;
	*) cp "$file" "/tmp/lib-ab-$name.db" ;;
	esac
	names+=("$name")
	shift
done
shift
. build-dev/wheels.sh
rm -rf /tmp/lib-ab && mkdir -p /tmp/lib-ab
for round in $(seq "$rounds"); do
	for name in "${names[@]}"; do
		s=$(date +%s)
		python3 -m autotune_dispatch.peers --lib "${libs[$name]}" --op "$op" \
			--db "/tmp/lib-ab-$name.db" --methods "${LIB_AB_METHODS:-lib,copy}" --reps 20 "$@" \
			--csv "/tmp/lib-ab/$name-$round.csv" 2>"/tmp/lib-ab/$name-$round.err" >/dev/null
		echo "$op $name round $round: rc $? in $(( $(date +%s) - s )) s"
	done
done
tar czf "$OUT/lib-ab-$op.tgz" -C /tmp lib-ab
EOS
cat >build-dev/lib-with.sh <<'EOS'
# lib-with.sh [--keep-models] DB OP...: /tmp/default.db = the committed
# library database (results/h200/library-h200.db.xz) with OPs' results,
# winners and kernels replaced by DB's (a sweep of those ops run here), for
# ops-peers.sh and ce-profile.sh; OPs' models DB's too, or with
# --keep-models the committed ones (an A/B of code, not of choices: a
# pruned sweep's refit would change what the model serves)
export LD_LIBRARY_PATH=$PWD/build-dev/lib
keep=0
[ "${1:-}" = --keep-models ] && { keep=1; shift; }
src=${1:?"lib-with.sh [--keep-models] DB OP..."}
shift
rm -f /tmp/default.db* /tmp/lib-with-src.db
xz -dc results/h200/library-h200.db.xz >/tmp/default.db
cp "$src" /tmp/lib-with-src.db
python3 - /tmp/default.db /tmp/lib-with-src.db "$keep" "$@" <<'EOP'
import json, sqlite3, sys
lib, src, keep, ops = sys.argv[1], sys.argv[2], sys.argv[3] == "1", sys.argv[4:]
c = sqlite3.connect(lib)
marks = ",".join("?" * len(ops))
kept = c.execute(f"SELECT * FROM models WHERE op IN ({marks})", ops).fetchall() if keep else []
json.dump([list(r) for r in kept], open("/tmp/lib-with-models.json", "w"))
for op in ops:
    c.execute("DELETE FROM kernels WHERE result_id IN (SELECT id FROM results WHERE op = ?)", (op,))
    for table in ("winners", "results") + (() if keep else ("models",)):
        c.execute(f"DELETE FROM {table} WHERE op = ?", (op,))
# sweeps left without results go too: a merge skips a sweep it has (DB may
# hold the very sweep the library was built from)
c.execute("DELETE FROM sweeps WHERE id NOT IN (SELECT DISTINCT sweep_id FROM results)")
c.commit()
if keep:
    s = sqlite3.connect(src)
    s.execute("DELETE FROM models")
    s.commit()
EOP
build-dev/autotune db merge /tmp/default.db /tmp/lib-with-src.db | head -1
# the merge refits models on what it merged: the kept ones go back
python3 - /tmp/default.db <<'EOP'
import json, sqlite3, sys
c = sqlite3.connect(sys.argv[1])
for r in json.load(open("/tmp/lib-with-models.json")):
    c.execute(f"INSERT OR REPLACE INTO models VALUES ({','.join('?' * len(r))})", r)
c.commit()
EOP
EOS
cat >build-dev/ops-peers.sh <<'EOS'
# ops-peers.sh OP [ARGS...]: the peer benchmark of OP into /tmp/OP-peers.csv
# (resumed: shapes it has are skipped), copied to $OUT with its log; ARGS
# go to python -m autotune_dispatch.peers (e.g. --dtypes bf16 --rows 1,4096,16384,
# --modes fwd_bwd, --random 7 --count 10, --reps 20)
export LD_LIBRARY_PATH=$PWD/build-dev/lib PYTHONUNBUFFERED=1 ATD_JIT_CACHE=/tmp/ops-jit.db
. build-dev/wheels.sh
op=${1:?"ops-peers.sh OP [ARGS...]"}
shift
python3 -m autotune_dispatch.peers --lib build-dev/lib/libautotune-dispatch.so --db /tmp/default.db \
	--op "$op" --resume --csv "/tmp/$op-peers.csv" "$@" 2>"/tmp/$op-peers.err" | tee -a "/tmp/$op-peers.log"
echo "peers rc ${PIPESTATUS[0]}"
cp "/tmp/$op-peers.csv" "/tmp/$op-peers.log" "$OUT/" 2>/dev/null
grep -v -i -e warn -e "^  " "/tmp/$op-peers.err" | tail -8
EOS
cat >build-dev/ce-profile.sh <<'EOS'
export LD_LIBRARY_PATH=$PWD/build-dev/lib PYTHONUNBUFFERED=1
[ -f /tmp/default.db ] || xz -dc results/h200/library-h200.db.xz >/tmp/default.db
AUTOTUNE_DB=/tmp/default.db AUTOTUNE_DISPATCH_LIB=$PWD/build-dev/lib/libautotune-dispatch.so \
	PYTHONPATH=python timeout 300 python3 tools/ce_call_profile.py "$@" 2>&1 |
	grep -v -i warn | tee "$OUT/ce-call-profile.log"
EOS
cat >build-dev/kernel-durations.sh <<'EOS'
# kernel-durations.sh [--stalls] OP DTYPE:M:N...: --stalls adds each launch's
# instructions and warp stall reasons (tools/ncu_stalls.py)
export LD_LIBRARY_PATH=$PWD/build-dev/lib PYTHONUNBUFFERED=1
[ -f /tmp/default.db ] || xz -dc results/h200/library-h200.db.xz >/tmp/default.db
stalls=0
[ "${1:-}" = --stalls ] && { stalls=1; shift; }
op=${1:?"kernel-durations.sh [--stalls] OP DTYPE:M:N..."}
shift
if [ $stalls = 1 ]; then
	PYTHONPATH=python timeout 400 /usr/local/cuda/bin/ncu --csv --page raw -k "regex:_kernel|triton" \
		--metrics "regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio\$,smsp__inst_executed.sum,gpu__time_duration.sum,sm__cycles_elapsed.max,launch__grid_size,launch__block_size,launch__registers_per_thread" \
		python3 tools/kernel_durations.py /tmp/default.db --op "$op" "$@" >"$OUT/kernel-stalls.csv" 2>"$OUT/kernel-stalls.err"
	echo "ncu rc $?"
	python3 tools/ncu_stalls.py "$OUT/kernel-stalls.csv" _kernel | tee "$OUT/kernel-stalls.txt"
	exit 0
fi
PYTHONPATH=python timeout 300 /usr/local/cuda/bin/ncu --nvtx --print-summary per-kernel \
	--metrics gpu__time_duration.sum,launch__grid_size,launch__block_size,launch__registers_per_thread \
	python3 tools/kernel_durations.py /tmp/default.db --op "$op" "$@" >"$OUT/kernel-durations.log" 2>&1
echo "ncu rc $?"
grep -E -A1 '^  [a-z_].*Invocations' "$OUT/kernel-durations.log" | grep -v '^--'
EOS
cat >build-dev/train-step.sh <<'EOS'
# train-step.sh [ARGS...]: tools/train_step.py ARGS; $OUT/train-step-h200.csv and .log
export LD_LIBRARY_PATH=$PWD/build-dev/lib PYTHONUNBUFFERED=1 ATD_JIT_CACHE=/tmp/train-jit.db \
	AUTOTUNE_DISPATCH_LIB=$PWD/build-dev/lib/libautotune-dispatch.so
. build-dev/wheels.sh
python3 tools/train_step.py --db /tmp/default.db --csv "$OUT/train-step-h200.csv" "$@" 2>&1 |
	grep --line-buffered -v -i -e "warn" | tee "$OUT/train-step-h200.log"
echo "train_step rc ${PIPESTATUS[0]}"
EOS
du -sh build-dev
# the device tool refuses a call whose tree (tracked and untracked files git
# does not ignore) and carried paths pass 64 MiB: what this stage leaves,
# with Liger's wheel (.whl) and without
tree_bytes=$( (git ls-files -z; git ls-files -z --others --exclude-standard) |
	xargs -0 stat -c %s -- 2>/dev/null | awk '{s += $1} END {print s + 0}' || true)
dev_bytes=$(find build-dev -type f -printf '%s\n' | awk '{s += $1} END {print s + 0}')
whl_bytes=$( (find .whl -type f -printf '%s\n' 2>/dev/null || true) | awk '{s += $1} END {print s + 0}')
awk -v t="$tree_bytes" -v d="$dev_bytes" -v w="$whl_bytes" 'BEGIN {
	mib = 1048576; all = (t + d) / mib; with = (t + d + w) / mib
	printf "device tree: %.1f MiB with build-dev, %.1f MiB with .whl too (limit 64)\n", all, with
	if (with > 64) print "device_stage: over 64 MiB with .whl: hold the results the runners never read out of the tree (bash tools/device_hold.sh out, then in after the calls) and remove what the runs do not need (build-dev/examples: bench.sh alone; build-dev/autotune: the sweeps, selftest, gen)" > "/dev/stderr"
}'
