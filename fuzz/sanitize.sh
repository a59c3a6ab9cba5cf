#!/usr/bin/env bash
# The Criterion suite under AddressSanitizer + UndefinedBehaviorSanitizer:
# builds build-asan/tests, build-asan/autotune and build-asan/lib with
#   CFLAGS="-O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer"
# and runs build-asan/tests with leak detection on and UB fatal.
#
#   fuzz/sanitize.sh [CRITERION ARGS...]     e.g. --filter 'config/*'
#
# Fails if a test fails or crashes, or if the output holds any sanitizer
# report (leaks do not fail a Criterion test by themselves; see below).
#
# Environment: BUILD_ASAN (build-asan), CC (cc), JOBS (make -j, nproc),
# SANITIZE_SHADOW (1), AUTOTUNE_TEST_COMPILE_CACHE (build/test-compile-cache.db).
#
# Some tests run the command line as a subprocess and name it
# "build/autotune" (and build/lib/...) outright, whatever BUILD is. So that
# those subprocesses are the sanitized build too, the tests run from a
# shadow of the repository (BUILD_ASAN/root: a symlink to each top-level
# entry, with build -> BUILD_ASAN). SANITIZE_SHADOW=0 runs them from the
# repository instead (the subprocesses are then the plain build/).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)

B=${BUILD_ASAN:-build-asan}
case $B in /*) Babs=$B ;; *) Babs=$repo/$B ;; esac
CC_BASE=${CC:-cc}
SAN="-fsanitize=address,undefined -fno-omit-frame-pointer"
JOBS=${JOBS:-$(nproc)}

# The fat binaries of the built-in kernel need nvcc; reuse the plain
# build's when it has them (same sources, timestamps kept).
if [ -d build/builtin ] && [ ! -e "$B/builtin" ]; then
	mkdir -p "$B"
	cp -pr build/builtin "$B/builtin"
fi

# The Makefile's link lines do not pass CFLAGS, so the sanitizers go into CC.
make --no-print-directory -j"$JOBS" BUILD="$B" CC="$CC_BASE $SAN" \
	CFLAGS="-O1 -g $SAN" "$B/tests" "$B/autotune" lib

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:strict_string_checks=1:detect_stack_use_after_return=1:check_initialization_order=1}
# A leak would make a process exit non-zero; leaks are judged from the log
# below instead. Criterion's runner leaks a block of its own (some --filter
# patterns): tests/runner_hooks.c stops leak tracking in the runner process
# only (a suppression naming libcriterion would hide our tests' leaks too,
# their stacks end in it), so that no report of it reaches the log;
# tests/test_leak_tracking.c checks that the tests are still tracked.
export LSAN_OPTIONS=${LSAN_OPTIONS:-exitcode=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}

run_dir=$repo
if [ "${SANITIZE_SHADOW:-1}" = 1 ]; then
	run_dir=$Babs/root
	rm -rf "$run_dir"
	mkdir -p "$run_dir"
	for entry in "$repo"/* "$repo"/.[!.]*; do
		[ -e "$entry" ] || continue
		name=$(basename "$entry")
		case $name in
		build | "$B" | .git) continue ;;
		esac
		ln -s "$entry" "$run_dir/$name"
	done
	ln -s "$Babs" "$run_dir/build"
fi

# The template tests' compile memo (tests/compile_memo.h): the plain
# build's, so that what `make test` compiled is not compiled again here
# (NVRTC is not what the sanitizers check); AUTOTUNE_TEST_COMPILE_CACHE=
# compiles everything.
export AUTOTUNE_TEST_COMPILE_CACHE=${AUTOTUNE_TEST_COMPILE_CACHE-$repo/build/test-compile-cache.db}
[ -z "$AUTOTUNE_TEST_COMPILE_CACHE" ] || mkdir -p "$(dirname "$AUTOTUNE_TEST_COMPILE_CACHE")"

tests_bin=$Babs/tests
log=$Babs/sanitize.log
cd "$run_dir"
status=0
"$tests_bin" --jobs "${TEST_JOBS:-2}" "$@" 2>&1 | tee "$log" || status=$?
# Criterion counts a test as passed when its worker process reports success
# before LeakSanitizer runs at the worker's exit: the leak report is
# printed, the test still passes. So the log is searched as well.
# Leak reports that name no file of this repository (a library's own) are
# left out.
reports=$(awk -v repo="$repo" '
	/ERROR: LeakSanitizer/ { inleak = 1; block = ""; ours = 0 }
	inleak { block = block "\n" $0; if (index($0, repo "/")) ours = 1 }
	inleak && /^SUMMARY:/ { inleak = 0; if (ours) printf "%s\n", block; next }
	!inleak && (/ERROR: AddressSanitizer/ || /runtime error:/) { print }
' "$log")
if [ -n "$reports" ]; then
	echo "sanitize: sanitizer reports in $log:" >&2
	printf '%s\n' "$reports" >&2
	[ $status -eq 0 ] && status=1
fi
if [ $status -ne 0 ]; then
	echo "sanitize: FAILED (exit $status); log in $log" >&2
else
	echo "sanitize: no sanitizer reports; log in $log"
fi
exit $status
