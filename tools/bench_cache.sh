#!/usr/bin/env bash
# Compiles every kernel of the benchmark here, without a GPU, so that
# `autotune bench` on the lent device finds them in its database's compile
# cache: there the bench's ~6000 kernels took more than a call's 10 minutes
# to compile on 16 cores, before any was timed.
#
#   tools/bench_cache.sh [CONFIG]   (default configs/bench.yaml)
#
# Keeps the cache in build-cache/bench.db (gitignored; a later run compiles
# only the kernels whose source changed) and packs its cubins, PTX dropped,
# into build-dev/bench-cache.db.xz (run tools/device_stage.sh first), which
# build-dev/bench.sh unpacks as the bench database. Stale entries (sources
# since changed) stay in the cache: delete build-cache/ to drop them.
set -euo pipefail
cd "$(dirname "$0")/.."
config=${1:-configs/bench.yaml}
[ -d build-dev ] || { echo "bench_cache: run tools/device_stage.sh first" >&2; exit 1; }
mkdir -p build-cache
build/autotune sweep --compile-only --arch sm_90 -c "$config" --db build-cache/bench.db | tail -1
rm -f build-cache/pack.db
sqlite3 build-cache/bench.db "VACUUM INTO 'build-cache/pack.db'"
sqlite3 build-cache/pack.db "UPDATE compile_cache SET ptx = NULL; VACUUM;"
xz -T0 -6 -c build-cache/pack.db >build-dev/bench-cache.db.xz
rm -f build-cache/pack.db
ls -l build-dev/bench-cache.db.xz
