#!/usr/bin/env bash
# Fetches the wheels of the peer libraries that the GPU machine lacks, for
# Python 3.12 on x86-64 Linux, with the device README's pip line (no
# dependencies: the machine has torch and triton), and prints their sizes
# against what a device call may carry (64 MiB, the tracked tree included).
#
#   tools/fetch_peer_wheels.sh           Liger-Kernel into .whl/ (carried)
#   tools/fetch_peer_wheels.sh --quack   also QuACK and its needs into
#                                        .whl-quack/, apart: they do not fit
#                                        a call (see the sizes it prints:
#                                        97.7 MiB, 87.7 of them the CuTe DSL's
#                                        CUDA 13 libraries, whose files still
#                                        take 60.6 MiB as tar.xz -9, beside a
#                                        tracked tree of 35 MiB)
#
# On the device (carry [".whl", ...]):
#   python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir \
#       --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PYTHONPATH
# Both folders are git-ignored (.gitignore: /.whl/, /.whl-quack/).
set -euo pipefail
cd "$(dirname "$0")/.."

LIGER=("liger-kernel==0.8.5")
# quack-kernels 0.6.5's needs, each pinned (Requires-Dist of each wheel);
# cuda-bindings, protobuf, typing-extensions, einops and torch are on the
# machine already. The CUDA 13 build of the DSL's libraries: the machine
# runs CUDA 13.
QUACK=("quack-kernels==0.6.5" "nvidia-cutlass-dsl==4.8.1" "nvidia-cutlass-dsl-libs-base==4.8.1"
       "nvidia-cutlass-dsl-libs-core==4.8.1" "nvidia-cutlass-dsl-libs-cu13==4.8.1"
       "apache-tvm-ffi==0.1.15.post2" "torch-c-dlpack-ext==0.1.5")
LIMIT=$((64 << 20))

fetch() { # DIR SPEC...: one pip download per spec (one version of each)
	local dir=$1
	shift
	mkdir -p "$dir"
	for spec in "$@"; do
		python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 \
			--implementation cp --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 \
			--platform manylinux_2_24_x86_64 --platform manylinux_2_17_x86_64 \
			--platform manylinux2014_x86_64 --platform manylinux1_x86_64 -d "$dir" "$spec"
	done
}

bytes() { # the bytes of the files given (0 for none)
	local n=0
	for f in "$@"; do [ -f "$f" ] && n=$((n + $(stat -c %s "$f"))); done
	echo "$n"
}

mib() { awk -v b="$1" 'BEGIN { printf "%.1f MiB", b / 1048576 }'; }

fetch .whl "${LIGER[@]}"
tree=$(git ls-files -z | xargs -0 stat -c %s | awk '{ s += $1 } END { print s + 0 }')
echo "tracked tree: $(mib "$tree")"
for f in .whl/*.whl; do echo "  $(mib "$(bytes "$f")")  $f"; done
carried=$(bytes .whl/*.whl)
echo ".whl: $(mib "$carried"); tree + .whl = $(mib $((tree + carried))) of the $(mib $LIMIT) a call carries"

if [ "${1:-}" = --quack ]; then
	fetch .whl-quack "${QUACK[@]}"
	for f in .whl-quack/*.whl; do echo "  $(mib "$(bytes "$f")")  $f"; done
	q=$(bytes .whl-quack/*.whl)
	total=$((tree + carried + q))
	if [ "$total" -le "$LIMIT" ]; then
		echo "QuACK fits: tree + .whl + .whl-quack = $(mib $total); carry .whl-quack too"
	else
		echo "QuACK does not fit: tree + .whl + .whl-quack = $(mib $total) > $(mib $LIMIT)" \
			"(nvidia-cutlass-dsl-libs-cu13 alone is $(mib "$(bytes .whl-quack/nvidia_cutlass_dsl_libs_cu13-*.whl)"));" \
			"the peer benchmark's quack rows say it is not importable"
	fi
fi
