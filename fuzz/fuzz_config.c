/* libFuzzer target: tuner/config.c (config_parse, then config_shapes on
 * what parses) on arbitrary bytes. Besides the sanitizers, checks that a
 * failure leaves a zeroed config and a "name:line:column: ..." message. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tuner/config.h"

/* libFuzzer's entry points. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define NAME "fuzz.yaml"

static void bad(const char *what, const at_error *err)
{
	fprintf(stderr, "config: %s (message: \"%s\")\n", what, err->msg);
	abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	sweep_config cfg;
	at_error err;
	err.msg[0] = '\0';
	if (config_parse((const char *)data, size, NAME, &cfg, &err) != 0) {
		static const sweep_config zero;
		if (memcmp(&cfg, &zero, sizeof cfg) != 0)
			bad("a failed parse left the config non-zero", &err);
		if (strncmp(err.msg, NAME ":", sizeof NAME) != 0)
			bad("a failed parse without a file:line:column message", &err);
		return 0;
	}
	if (cfg.nspecs == 0 || !cfg.specs || cfg.warmup < 0 || cfg.repetitions < 1)
		bad("a config that parsed is not valid", &err);
	size_t declared = 0;
	for (size_t i = 0; i < cfg.nspecs; i++) {
		const sweep_spec *s = &cfg.specs[i];
		if (!s->op || !s->ndtypes || !s->nM || !s->nN)
			bad("a sweep entry that parsed lacks op, dtypes, M or N", &err);
		for (size_t k = 0; k < s->nM; k++)
			if (s->Ms[k] < 1)
				bad("M < 1 parsed", &err);
		for (size_t k = 0; k < s->nN; k++)
			if (s->Ns[k] < 1)
				bad("N < 1 parsed", &err);
		declared += s->ndtypes * s->nM * s->nN;
	}
	sweep_shape *shapes;
	size_t n;
	if (config_shapes(&cfg, &shapes, &n, &err) == 0) {
		if (n > declared || (declared && !n))
			bad("config_shapes gave a wrong count", &err);
		for (size_t i = 0; i < n; i++)
			if (!shapes[i].op || shapes[i].M < 1 || shapes[i].N < 1)
				bad("config_shapes gave a bad shape", &err);
		free(shapes);
	}
	config_free(&cfg);
	return 0;
}
