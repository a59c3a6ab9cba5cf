// Template cross_entropy_loop: the cross-entropy loss and gradient for any
// vocabulary, one CTA a row in two passes (templates/cross_entropy_two_pass.cuh):
// an online max and sum of exps, then the logits read again (from L2 while
// the rows in flight fit) to write the gradient. Nothing held between the
// passes but the row's sums, so any V fits.
// Regime: vocabularies past what shared memory holds, and the fallback.
//
// Parameters (macros set by the generator):
//   THREADS     threads per CTA (a multiple of 32)
//   VEC         elements per vector access (VEC * element size <= 16 B)
//   UNROLL      vectors a thread loads per loop step (loads in flight)
//   PERSISTENT  0: one row per CTA; 1: occupancy-sized grid that loops
#define STAGE_ROW 0
#include "cross_entropy_two_pass.cuh"
