/* Winners the library carries for a process with no tuning database (the
 * default sweep's, params only: tools/gen_seed_winners.py writes
 * seed_winners.c). With NVRTC they are derived for any shape like a
 * database's winners; they carry no code, so without NVRTC they serve
 * nothing and the built-in kernel runs. */
#ifndef AT_DISPATCH_SEED_WINNERS_H
#define AT_DISPATCH_SEED_WINNERS_H

#include "common/dtype.h"

typedef struct atdi_seed {
	at_dtype dtype;
	long long M, N;
	const char *template_name;
	const char *params;
} atdi_seed;

extern const char atdi_seed_gpu[]; /* the GPU they were tuned on */
extern const atdi_seed atdi_seeds[];
extern const int atdi_nseeds;

#endif
