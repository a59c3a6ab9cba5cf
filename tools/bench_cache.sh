#!/usr/bin/env bash
# Compiles every kernel of a sweep config here, without a GPU, so that the
# runners on the lent device (build-dev/bench.sh, build-dev/ab.sh) find them
# in their database's compile cache: there the bench's ~6000 kernels took
# more than a call's 10 minutes to compile on 16 cores, before any was
# timed.
#
#   tools/bench_cache.sh [-c CONFIG] [--templates DIR] [-o NAME] [--exhaustive]
#
#   bench (default): configs/bench.yaml, the templates -> build-dev/bench-cache.db.xz
#   an A/B:          -c build-dev/ab.yaml --templates build-dev/tpl-ab -o ab
#                    -> build-dev/ab-cache.db.xz
#   an exact sweep:  -c CONFIG --exhaustive -o NAME -> build-dev/NAME-cache.db.xz,
#                    every variant's kernel, for build-dev/op-sweep.sh CONFIG DB NAME
#   a selftest:      -c SEL.yaml -o sel -> build-dev/sel-cache.db.xz, for
#                    build-dev/selftest.sh; SEL.yaml sweeps the selftest's row
#                    lengths (autotune selftest --dry-run lists them) for its
#                    templates: a kernel's source depends on its params and
#                    dtype, not on M or N
#
# Keeps the cache in build-cache/NAME.db (gitignored; a later run compiles
# only the kernels whose source changed) and packs its cubins, PTX dropped,
# into build-dev/NAME-cache.db.xz (run tools/device_stage.sh first), which
# the runner unpacks as its database. Stale entries (sources since changed)
# stay in the cache: delete build-cache/NAME.db to drop them.
set -euo pipefail
cd "$(dirname "$0")/.."
config=configs/bench.yaml
templates=templates
name=bench
exhaustive=
while [ $# -gt 0 ]; do
	case "$1" in
	-c) config=$2; shift 2 ;;
	--templates) templates=$2; shift 2 ;;
	-o) name=$2; shift 2 ;;
	--exhaustive) exhaustive=--exhaustive; shift ;;
	*) echo "bench_cache: unknown argument $1" >&2; exit 2 ;;
	esac
done
[ -d build-dev ] || { echo "bench_cache: run tools/device_stage.sh first" >&2; exit 1; }
mkdir -p build-cache
build/autotune sweep --compile-only $exhaustive --arch sm_90 -c "$config" --templates "$templates" \
	--db "build-cache/$name.db" | tail -1
# the packed copy beside the cache, under a name no NAME takes (-o pack once
# removed its own cache here)
packed="build-cache/$name.packing"
rm -f "$packed"
sqlite3 "build-cache/$name.db" "VACUUM INTO '$packed'"
sqlite3 "$packed" "UPDATE compile_cache SET ptx = NULL; VACUUM;"
xz -T0 -6 -c "$packed" >"build-dev/$name-cache.db.xz"
rm -f "$packed"
ls -l "build-dev/$name-cache.db.xz"
