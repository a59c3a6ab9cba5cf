#!/usr/bin/env bash
# Installs the Debian packages the build and the tests need, if missing, and
# checks that the CUDA toolkit (NVRTC and headers) is where the build looks.
# With "ci", also what CI's further checks need: Chromium for the browser
# test, clang and its runtime for the fuzz targets.
# Usage: scripts/install-deps.sh [ci]   (CUDA_HOME defaults to /usr/local/cuda)
set -euo pipefail

packages=(build-essential pkg-config libsqlite3-dev libyaml-dev libcriterion-dev sqlite3 python3
	python3-venv) # python3-venv: the Python package's install test
case "${1:-}" in
"") ;;
ci) packages+=(chromium clang libclang-rt-dev) ;;
*) echo "install-deps: unknown argument \"$1\" (expected nothing or ci)" >&2; exit 2 ;;
esac
missing=()
for p in "${packages[@]}"; do
	dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done

if ((${#missing[@]})); then
	echo "install-deps: installing ${missing[*]}"
	sudo=""
	if [ "$(id -u)" -ne 0 ]; then
		command -v sudo >/dev/null || { echo "install-deps: need root or sudo to install ${missing[*]}" >&2; exit 1; }
		sudo="sudo"
	fi
	export DEBIAN_FRONTEND=noninteractive
	$sudo apt-get update -qq
	$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

cuda="${CUDA_HOME:-/usr/local/cuda}"
if [ ! -f "$cuda/include/nvrtc.h" ] || ! ls "$cuda"/lib64/libnvrtc.so* >/dev/null 2>&1; then
	echo "install-deps: no CUDA toolkit with NVRTC at $cuda (set CUDA_HOME)" >&2
	exit 1
fi
