/* Exporting what an application ships (`autotune db export IN OUT`): the
 * GPUs, the winners, their results and stored kernels, and the sweeps they
 * came from; not the compile cache, the other variants' results or the
 * baselines. The dispatch library reads it like the full database. */
#ifndef AT_DB_EXPORT_H
#define AT_DB_EXPORT_H

#include "common/error.h"

typedef struct export_stats {
	long long winners, kernels, bytes_in, bytes_out;
} export_stats;

/* Writes out (which must not exist) from in (a tuning database of this
 * schema version). On failure out is removed and err says why. */
int db_export(const char *in, const char *out, export_stats *stats, at_error *err);

#endif
