/* Winners chosen again by `db merge`, and the guarantee that a winner has
 * its kernel (`db merge`, `db export`).
 *
 * One rule chooses every winner: tdb_pick_winner (db/tuning_db.h), the
 * fastest, or within the noise band of it the fewest registers. The sweep
 * applies it to every variant of a shape with the band it measured and
 * stores the kernel of its pick, and of no other row. A merge cannot apply
 * it to all the rows again: only the sweeps' picks have kernels, and each
 * band belongs to one sweep. So merge applies the same rule to the picks
 * (the results with a stored kernel) with the widest band any of their
 * sweeps stored for the shape (a shape tuned by one sweep keeps that
 * sweep's winner), and stores that band. The widest band makes the choice
 * independent of the order and grouping of merges. */
#ifndef AT_DB_WINNERS_H
#define AT_DB_WINNERS_H

#include "common/error.h"

struct sqlite3;

/* Chooses every shape's winner of main again, in the caller's transaction.
 * Reads temp.prior (gpu_id, op, dtype, m, n, result_id, sweep_id,
 * noise_band): the winners rows of OUT and of the input before the merge,
 * for their bands, their shapes without a winner and the check. Fails,
 * naming the shape (label begins the message, e.g. "merging IN into OUT"),
 * when a shape that had a winner is left without one that has a kernel;
 * the caller rolls back. */
int winners_choose(struct sqlite3 *s, const char *label, at_error *err);

/* 0 if every winner of main has its stored kernel; with by_shape, if the
 * shape of every winner has some result with a kernel (what merge chooses
 * among). Else -1, err naming label and the first such shape. */
int winners_check_kernels(struct sqlite3 *s, const char *label, int by_shape, at_error *err);

#endif
