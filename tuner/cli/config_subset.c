/* A dtype subset of a config: see config_subset.h. */
#include "tuner/cli/config_subset.h"

#include <stdlib.h>
#include <string.h>

#include "common/strbuf.h"

static void put_list(strbuf *s, const char *key, const long long *v, size_t n)
{
	strbuf_printf(s, "    %s: [", key);
	for (size_t i = 0; i < n; i++)
		strbuf_printf(s, "%s%lld", i ? ", " : "", v[i]);
	strbuf_puts(s, "]\n");
}

char *config_dtype_subset(const sweep_config *cfg, unsigned mask)
{
	strbuf s = { 0 };
	strbuf_printf(&s, "# %s, dtypes restricted\nwarmup: %d\nrepetitions: %d\n"
		      "min_repetitions: %d\ntolerance: %.17g\ntime_budget_ms: %.17g\nsweeps:\n",
		      cfg->path ? cfg->path : "config", cfg->warmup, cfg->repetitions,
		      cfg->min_repetitions, cfg->tolerance, cfg->time_budget_ms);
	int kept = 0;
	for (size_t i = 0; i < cfg->nspecs; i++) {
		const sweep_spec *sp = &cfg->specs[i];
		int any = 0;
		for (size_t d = 0; d < sp->ndtypes; d++)
			any |= (mask >> sp->dtypes[d]) & 1;
		if (!any)
			continue;
		kept = 1;
		strbuf_printf(&s, "  - op: %s\n    dtypes: [", sp->op);
		int first = 1;
		for (size_t d = 0; d < sp->ndtypes; d++) {
			if (!((mask >> sp->dtypes[d]) & 1))
				continue;
			strbuf_printf(&s, "%s%s", first ? "" : ", ", at_dtype_name(sp->dtypes[d]));
			first = 0;
		}
		strbuf_puts(&s, "]\n");
		put_list(&s, "M", sp->Ms, sp->nM);
		put_list(&s, "N", sp->Ns, sp->nN);
		if (sp->templates) {
			strbuf_puts(&s, "    templates: [");
			for (size_t t = 0; t < sp->ntemplates; t++)
				strbuf_printf(&s, "%s%s", t ? ", " : "", sp->templates[t]);
			strbuf_puts(&s, "]\n");
		}
	}
	if (!kept) {
		strbuf_free(&s);
		return NULL;
	}
	return strbuf_take(&s);
}

int dtype_list_parse(const char *text, unsigned *mask)
{
	char *copy = xstrdup(text), *save = NULL;
	int rc = 0, any = 0;
	for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		at_dtype dt;
		if (at_dtype_parse(tok, &dt)) {
			rc = -1;
			break;
		}
		*mask |= 1u << dt;
		any = 1;
	}
	free(copy);
	return rc == 0 && any ? 0 : -1;
}
