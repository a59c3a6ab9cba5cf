#!/usr/bin/env bash
# Refits the backward ops' performance models on every backward sweep of a
# GPU, new sweeps included, and makes the library database that serves them:
# the way sessions 62-65 did it by hand (docs/NOTES.md), one place now.
#
#   tools/backward_refit.sh [-g h200] [-a AUTOTUNE] DIR NEW.db...
#
#   DIR/full.db     results/GPU/backward-GPU.db.xz, every backward-*-GPU.db.xz (not
#                   backward-tall164-exhaustive, a one-shape audit, nor the
#                   rejected-*), and NEW.db..., merged; where a shape and
#                   template were swept more than once only the newest
#                   sweep's results are kept (an older template's times
#                   would teach the model a kernel that no longer exists);
#                   both backward models fitted on it and stored
#   DIR/library.db  results/GPU/library-GPU.db.xz merged with NEW.db..., its
#                   backward models replaced by full.db's (the forward and
#                   cross-entropy models and the seeds untouched), exported
#                   (`db export`: what the library reads, nothing more)
#
# Judge DIR/library.db against the committed one on the device (lib-ab.sh)
# before committing it as results/GPU/library-GPU.db.xz (xz -9).
set -euo pipefail
cd "$(dirname "$0")/.."
gpu=h200
autotune=build/autotune
while [ $# -gt 0 ]; do
	case "$1" in
	-g) gpu=$2; shift 2 ;;
	-a) autotune=$2; shift 2 ;;
	-*) echo "backward_refit: unknown option $1" >&2; exit 2 ;;
	*) break ;;
	esac
done
dir=${1:?"usage: tools/backward_refit.sh [-g GPU] [-a AUTOTUNE] DIR NEW.db..."}
shift
[ $# -gt 0 ] || { echo "backward_refit: no new sweep database given" >&2; exit 2; }
for db in "$@"; do
	[ -f "$db" ] || { echo "backward_refit: $db: no such file" >&2; exit 2; }
done
mkdir -p "$dir/sweeps"
rm -f "$dir/full.db" "$dir/merged.db" "$dir/library.db"

sweeps=()
for xz in results/$gpu/backward-$gpu.db.xz results/$gpu/backward-*-$gpu.db.xz; do
	case "$xz" in *tall164-exhaustive*) continue ;; esac
	db=$dir/sweeps/$(basename "$xz" .xz)
	[ -f "$db" ] || xz -dc "$xz" >"$db"
	sweeps+=("$db")
done
"$autotune" db merge "$dir/full.db" "${sweeps[@]}" "$@" >/dev/null
sqlite3 "$dir/full.db" "
	DELETE FROM results WHERE op IN ('softmax_backward', 'log_softmax_backward')
	AND (SELECT started_at FROM sweeps WHERE id = results.sweep_id) <
	    (SELECT max(s.started_at) FROM results r JOIN sweeps s ON s.id = r.sweep_id
	     WHERE r.gpu_id = results.gpu_id AND r.op = results.op AND r.dtype = results.dtype
	       AND r.m = results.m AND r.n = results.n AND r.template = results.template);
	SELECT 'older results dropped: ' || changes();"
for op in softmax_backward log_softmax_backward; do
	"$autotune" model fit --db "$dir/full.db" --op "$op" --store
done

xz -dc "results/$gpu/library-$gpu.db.xz" >"$dir/head.db"
# merge fits its models again on what it merged (the library's winners
# alone for the backward ops): those are replaced by full.db's below
"$autotune" db merge "$dir/merged.db" "$dir/head.db" "$@" >/dev/null
sqlite3 "$dir/merged.db" "
	ATTACH '$dir/full.db' AS full;
	DELETE FROM models WHERE op IN ('softmax_backward', 'log_softmax_backward');
	INSERT INTO models (gpu_id, op, fitted_at, shapes, samples, text)
	SELECT g.id, m.op, m.fitted_at, m.shapes, m.samples, m.text
	FROM full.models m JOIN full.gpus fg ON fg.id = m.gpu_id
	JOIN gpus g ON g.name = fg.name AND g.cc_major = fg.cc_major AND g.cc_minor = fg.cc_minor
	    AND g.sm_count = fg.sm_count AND g.mem_bytes = fg.mem_bytes
	WHERE m.op IN ('softmax_backward', 'log_softmax_backward');
	SELECT op || ': ' || shapes || ' shapes' FROM models ORDER BY op;"
# what the library reads: the winners, their results and kernels, the models
"$autotune" db export "$dir/merged.db" "$dir/library.db" >/dev/null
rm "$dir/merged.db"
echo "$dir/library.db: the library database; $dir/full.db: every backward sweep"
