#!/bin/bash
# Moves the committed results the GPU machine's runners never read out of
# the working tree (out) and back (in), so that a device call's tree (the
# tracked files present, build-dev, a wheel) stays under the device tool's
# 64 MiB. The databases device_stage.sh's runners read stay: the library's,
# the H200 default sweep's and results/example's (bench.sh). Never run the
# tests while the files are out.
#   bash tools/device_hold.sh out   before the device calls
#   bash tools/device_hold.sh in    right after
set -euo pipefail
cd "$(dirname "$0")/.."
HOLD=${DEVICE_HOLD_DIR:-/tmp/autotune-device-hold}
case "${1:-}" in
out)
	mkdir -p "$HOLD"
	# the largest files, but the runners' databases
	git ls-files -z results | xargs -0 du -b | sort -rn | awk '$1 > 300000 {print $2}' |
		grep -v -x -e results/h200/library-h200.db.xz -e results/h200/default-h200.db.xz \
			-e results/example/h100-default.db | while read -r f; do
		[ -f "$f" ] || continue
		mkdir -p "$HOLD/$(dirname "$f")"
		[ -e "$HOLD/$f" ] && { echo "device_hold: $HOLD/$f is there already (run in first)" >&2; exit 1; }
		mv "$f" "$HOLD/$f"
	done
	echo "device_hold: $(find "$HOLD" -type f | wc -l) files held in $HOLD" ;;
in)
	[ -d "$HOLD" ] || { echo "device_hold: nothing held ($HOLD)" >&2; exit 0; }
	(cd "$HOLD" && find . -type f -printf '%P\n') | while read -r f; do
		[ -e "$f" ] && { echo "device_hold: $f is in the tree; $HOLD/$f left where it is" >&2; continue; }
		mkdir -p "$(dirname "$f")"
		mv "$HOLD/$f" "$f"
	done
	find "$HOLD" -depth -type d -empty -delete
	echo "device_hold: back in the tree" ;;
*)
	echo "usage: bash tools/device_hold.sh out|in" >&2
	exit 2 ;;
esac
