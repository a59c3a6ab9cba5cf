/* libFuzzer target: reports/peers_csv.c (peers_parse, then the lookups the
 * report makes) on arbitrary bytes. Besides the sanitizers, checks that a
 * failure leaves an empty set and a "name:..." message, and that what
 * parses holds only valid rows. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reports/peers_csv.h"

/* libFuzzer's entry points. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define NAME "fuzz.csv"

static void bad(const char *what, const at_error *err)
{
	fprintf(stderr, "peers_csv: %s (message: \"%s\")\n", what, err->msg);
	abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	peer_set p;
	at_error err;
	err.msg[0] = '\0';
	if (peers_parse(NAME, (const char *)data, size, &p, &err) != 0) {
		if (p.rows || p.n_rows || p.path)
			bad("a failed parse left the set non-empty", &err);
		if (strncmp(err.msg, NAME ":", sizeof NAME) != 0)
			bad("a failed parse without a file:line message", &err);
		return 0;
	}
	if (p.n_rows == 0)
		bad("a parse with no rows succeeded", &err);
	for (size_t i = 0; i < p.n_rows; i++) {
		const peer_row *r = &p.rows[i];
		if (r->M < 1 || r->N < 1 || !r->dtype || !r->method || !*r->method ||
		    (r->ok && !(r->us > 0 && isfinite(r->us))) || (!r->gpu) != (!p.has_gpu))
			bad("a row that parsed is not valid", &err);
		const char *gpu = r->gpu ? r->gpu : "";
		const peer_row *best = peers_best(&p, gpu, r->dtype, r->M, r->N);
		if (best && (!best->ok || !best->clean || !peers_is_peer(best->method)))
			bad("the best peer is not a timed clean peer row", &err);
		const char *names[4];
		size_t n = peers_methods(&p, gpu, r->dtype, r->M, names, 4);
		for (size_t k = 0; k < n; k++)
			if (!peers_is_peer(names[k]))
				bad("peers_methods gave the library's own row", &err);
	}
	peers_free(&p);
	return 0;
}
