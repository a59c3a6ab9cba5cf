/* The peers of `autotune report --peers FILE.csv`: the CSV that
 * `python -m autotune_dispatch.peers` writes (a header, then one row per
 * shape, L2 condition and method), read and checked whole. Columns by the
 * header's names, in any order: dtype, M, N, flush (clean or dirty), method,
 * status (ok, or why not timed) and us (the median, microseconds) are
 * needed; gpu (the device's name) is used when present; others (gbps,
 * rel_err, served_by) are ignored. Fields may be quoted ("a, b", "say
 * ""x"""), within one line. Every error names the file and line. */
#ifndef AT_REPORTS_PEERS_CSV_H
#define AT_REPORTS_PEERS_CSV_H

#include <stddef.h>

#include "common/error.h"

typedef struct peer_row {
	char *gpu;        /* NULL when the CSV has no gpu column */
	char *dtype;      /* f32, f16 or bf16 */
	long long M, N;
	int clean;        /* flush: 1 clean, 0 dirty */
	char *method;     /* torch, triton, compile, lib, copy, ... */
	int ok;           /* status ok: us is a time */
	double us;        /* NAN when not ok */
	int line;         /* in the file */
} peer_row;

typedef struct peer_set {
	char *path;
	peer_row *rows;
	size_t n_rows;
	int has_gpu;      /* the CSV has a gpu column */
} peer_set;

/* Reads path. Returns 0, or -1 with err "PATH: cannot read: ..." or
 * "PATH:LINE: ..." (and *out empty). */
int peers_load(const char *path, peer_set *out, at_error *err);

/* The same from text already read (path names it in messages). */
int peers_parse(const char *path, const char *text, size_t len, peer_set *out, at_error *err);

void peers_free(peer_set *p);

/* Whether method is a peer the report draws: anything but the library's
 * own rows (lib, lib_nodb, ...) and the copy. */
int peers_is_peer(const char *method);

/* How a method is shown: torch -> "torch.softmax", triton -> "Triton
 * tutorial", compile -> "torch.compile", others as they are. */
const char *peers_label(const char *method);

/* Whether row r is for this GPU (any GPU when the CSV names none). */
int peers_row_on(const peer_row *r, const char *gpu);

/* The timed clean-L2 row of peer method at the shape on gpu, or NULL. */
const peer_row *peers_find(const peer_set *p, const char *gpu, const char *dtype, long long M,
			   long long N, const char *method);

/* The fastest timed clean-L2 peer at the shape on gpu, or NULL. */
const peer_row *peers_best(const peer_set *p, const char *gpu, const char *dtype, long long M,
			   long long N);

/* The distinct peer methods with a timed clean-L2 row for (gpu, dtype, M),
 * torch, triton and compile first, then others by name; at most cap.
 * Returns how many were written to names (pointing into p). */
size_t peers_methods(const peer_set *p, const char *gpu, const char *dtype, long long M,
		     const char **names, size_t cap);

#endif
