/* Choosing a shape's winner without timing every variant in full: every
 * variant that passed its check gets a short first round (a few
 * repetitions, more while its median is uncertain); the fastest few get the
 * config's full timing (repetitions until the median is known,
 * tuner/timing/rep_rule.h), all interleaved at once; the top four are re-timed
 * interleaved (one repetition of each in turn, until every median is
 * known), and the spread of those repetitions is the noise band. After each
 * round the variants it left out are rescaled by how much the ones it
 * re-timed moved, so that every row is on the last round's time base and
 * one left out cannot win on an earlier round's clock. The winner is the
 * fastest, or among those within the band of it the one with the fewest
 * registers (tdb_pick_winner), so that noise does not decide between
 * equals and the same sweep picks the same winner. The band is capped: a
 * tie-break never gives up more than REFINE_BAND_MAX of speed, whatever
 * the noise. */
#ifndef AT_TUNER_REFINE_H
#define AT_TUNER_REFINE_H

#include <stddef.h>

#include "db/tuning_db.h"
#include "tuner/timing/timer.h"

/* The first round only ranks: it stops once the median's 95% interval is
 * within 10% (6 repetitions, the fewest that have one, for a steady
 * kernel), else at 8. At 4% and 12, most variants of the default sweep
 * took all 12 (short kernels vary more than 4% from launch to launch), and
 * the round was 40% of the warm sweep's time (H100); those within 5% of the
 * best still go on to full timing (REFINE_FULL_WITHIN). */
#define REFINE_QUICK_WARMUP 1
#define REFINE_QUICK_MIN_REPS 6
#define REFINE_QUICK_MAX_REPS 8
#define REFINE_QUICK_TOLERANCE 0.10
#define REFINE_FULL_MIN 6         /* at least this many get full timing */
#define REFINE_FULL_WITHIN 0.05   /* and every one that came within 5% of the best */
#define REFINE_FULL_MAX 12        /* <= REP_MAX_SERIES: timed interleaved */
#define REFINE_FINALISTS 4
#define REFINE_BAND_MIN 0.005     /* the band is never taken below 0.5% */
#define REFINE_BAND_MAX 0.01      /* nor above 1% */

typedef struct refine_candidate {
	result_row *row;
	timed_launch_fn launch;
	void *arg;
	double check_us; /* its check run's time (0: not known) */
} refine_candidate;

/* A variant whose check run took more than REFINE_SCREEN_RATIO times the
 * fastest one's is not timed further: the check run is its timing. Only
 * where the fastest check run took REFINE_SCREEN_MIN_US or more, so that a
 * first launch's fixed costs (a few us) cannot screen out a short kernel.
 * In the default sweep, 29% of the variants were over 1.5x their shape's
 * best, and they cost a third of the first round's time. */
#define REFINE_SCREEN_RATIO 1.5
#define REFINE_SCREEN_MIN_US 40.0

/* Moves the candidates to time to the front of c and returns how many;
 * the others (see REFINE_SCREEN_RATIO) get their check run as a timing of
 * one repetition. */
size_t refine_screen(refine_candidate *c, size_t n, double bytes, double copy_gbps);

/* Fills row's timing fields from t. */
void refine_set_timing(result_row *row, const timing *t, double bytes, double copy_gbps);

/* The first round's repetition policy. */
rep_policy refine_quick_policy(void);

/* Times every candidate briefly (first round). */
int refine_quick(gpu_timer *b, refine_candidate *c, size_t n, double bytes, double copy_gbps,
		 at_error *err);

/* Full timing of every candidate (sweep --full-timing: the reference the
 * rounds are measured against). */
int refine_all(gpu_timer *b, refine_candidate *c, size_t n, double bytes, double copy_gbps,
	       at_error *err);

/* The later rounds over candidates that all passed the first; sets *band.
 * Leaves c[0..*nfull) the candidates that got full timing. */
int refine_finish(gpu_timer *b, refine_candidate *c, size_t n, double bytes, double copy_gbps,
		  double *band, size_t *nfull, at_error *err);

/* How many of c[0..n) (sorted by first-round median) get full timing,
 * moving them to the front: the REFINE_FULL_MIN fastest, then, up to
 * REFINE_FULL_MAX, every one whose fastest repetition came within
 * REFINE_FULL_WITHIN of the best median (a noisy first round cannot rank
 * those; a steady one can). */
size_t refine_pick_full(refine_candidate *c, size_t n);

/* Times launch[0..k) (the baselines) into rows[0..k), interleaved with
 * each other and with ref (the winner), on ref's time base: each median
 * times ref's stored median over ref's median in this timing. So "faster
 * than cuDNN" compares kernels timed together, not a minute apart. Without
 * ref (no winner), they are timed among themselves. */
int refine_beside(gpu_timer *b, const refine_candidate *ref, const timed_launch_fn *launch,
		  void *const *arg, int k, double bytes, double copy_gbps, result_row *const *rows,
		  at_error *err);

#endif
