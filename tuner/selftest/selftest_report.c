/* The selftest's table and verdict: see selftest_report.h. */
#include "tuner/selftest/selftest_report.h"

#include <stdlib.h>
#include <string.h>

#include "common/strbuf.h"
#include "tuner/table.h"

typedef struct st_row {
	at_dtype dt;
	st_case c;
	char *template_name;
	char **params; /* distinct variants run */
	size_t nparams, cap_params;
	long long runs, passed, failed, not_run;
	char **failures; /* the first ST_REPORT_MAX_LISTED, formatted */
	size_t nlisted;
} st_row;

struct st_report {
	st_row *rows;
	size_t nrows, cap;
	char *not_run_reason; /* the first one */
};

st_report *st_report_new(void)
{
	return xcalloc(1, sizeof(st_report));
}

void st_report_free(st_report *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->nrows; i++) {
		st_row *row = &r->rows[i];
		free(row->template_name);
		for (size_t k = 0; k < row->nparams; k++)
			free(row->params[k]);
		free(row->params);
		for (size_t k = 0; k < row->nlisted; k++)
			free(row->failures[k]);
		free(row->failures);
	}
	free(r->rows);
	free(r->not_run_reason);
	free(r);
}

static st_row *find_row(st_report *r, at_dtype dt, st_case c, const char *template_name)
{
	for (size_t i = 0; i < r->nrows; i++)
		if (r->rows[i].dt == dt && r->rows[i].c == c &&
		    strcmp(r->rows[i].template_name, template_name) == 0)
			return &r->rows[i];
	if (r->nrows == r->cap) {
		r->cap = r->cap ? r->cap * 2 : 32;
		r->rows = xrealloc(r->rows, r->cap * sizeof *r->rows);
	}
	st_row *row = &r->rows[r->nrows++];
	memset(row, 0, sizeof *row);
	row->dt = dt;
	row->c = c;
	row->template_name = xstrdup(template_name);
	return row;
}

void st_report_row(st_report *r, at_dtype dt, st_case c, const char *template_name)
{
	find_row(r, dt, c, template_name);
}

static void note_params(st_row *row, const char *params)
{
	for (size_t k = 0; k < row->nparams; k++)
		if (strcmp(row->params[k], params) == 0)
			return;
	if (row->nparams == row->cap_params) {
		row->cap_params = row->cap_params ? row->cap_params * 2 : 64;
		row->params = xrealloc(row->params, row->cap_params * sizeof *row->params);
	}
	row->params[row->nparams++] = xstrdup(params);
}

void st_report_add(st_report *r, at_dtype dt, st_case c, const char *template_name,
		   const char *params, const char *shape, long long tuned_n,
		   const st_outcome *o)
{
	st_row *row = find_row(r, dt, c, template_name);
	note_params(row, params);
	row->runs++;
	switch (o->status) {
	case ST_PASSED: row->passed++; return;
	case ST_NOT_RUN:
		row->not_run++;
		if (!r->not_run_reason)
			r->not_run_reason = xstrdup(o->reason);
		return;
	case ST_FAILED: break;
	}
	row->failed++;
	if (row->nlisted == ST_REPORT_MAX_LISTED)
		return;
	strbuf s = { 0 };
	strbuf_printf(&s, "%s at %s", params, shape);
	if (tuned_n > 0)
		strbuf_printf(&s, " (as tuned at N=%lld)", tuned_n);
	strbuf_printf(&s, ": %s", o->reason);
	if (!row->failures)
		row->failures = xcalloc(ST_REPORT_MAX_LISTED, sizeof *row->failures);
	row->failures[row->nlisted++] = strbuf_take(&s);
}

/* Whether any row of (dt, template) has a run. */
static int tested(const st_report *r, at_dtype dt, const char *template_name)
{
	for (size_t i = 0; i < r->nrows; i++)
		if (r->rows[i].dt == dt && r->rows[i].runs &&
		    strcmp(r->rows[i].template_name, template_name) == 0)
			return 1;
	return 0;
}

/* Whether row i is the first of its (dt, template) pair. */
static int first_of_pair(const st_report *r, size_t i)
{
	for (size_t k = 0; k < i; k++)
		if (r->rows[k].dt == r->rows[i].dt &&
		    strcmp(r->rows[k].template_name, r->rows[i].template_name) == 0)
			return 0;
	return 1;
}

st_totals st_report_totals(const st_report *r)
{
	st_totals t = { 0 };
	for (size_t i = 0; i < r->nrows; i++) {
		const st_row *row = &r->rows[i];
		t.runs += row->runs;
		t.passed += row->passed;
		t.failed += row->failed;
		t.not_run += row->not_run;
		if (first_of_pair(r, i) && !tested(r, row->dt, row->template_name))
			t.untested++;
	}
	return t;
}

int st_report_exit_status(const st_report *r)
{
	st_totals t = st_report_totals(r);
	return t.failed || t.not_run || t.untested || t.runs == 0 ? 1 : 0;
}

static void print_table(const st_report *r, FILE *out)
{
	static const char *const header[] = { "dtype", "case", "template", "variants", "runs",
					      "passed", "failed", "not run", "status", NULL };
	table t;
	table_init(&t, header);
	for (size_t i = 0; i < r->nrows; i++) {
		const st_row *row = &r->rows[i];
		char v[32], runs[32], ok[32], bad[32], nr[32];
		snprintf(v, sizeof v, "%zu", row->nparams);
		snprintf(runs, sizeof runs, "%lld", row->runs);
		snprintf(ok, sizeof ok, "%lld", row->passed);
		snprintf(bad, sizeof bad, "%lld", row->failed);
		snprintf(nr, sizeof nr, "%lld", row->not_run);
		const char *note = row->failed	    ? "FAILED"
				   : row->not_run  ? "NOT RUN"
				   : row->runs == 0 ? "no shape of this case reaches it"
						    : "ok";
		const char *cells[] = { at_dtype_name(row->dt), st_case_name(row->c),
					row->template_name, v, runs, ok, bad, nr, note };
		table_add(&t, cells);
	}
	table_print(&t, out, TABLE_TEXT, NULL);
	table_free(&t);
}

void st_report_print(const st_report *r, FILE *out)
{
	print_table(r, out);
	int header = 0;
	for (size_t i = 0; i < r->nrows; i++) {
		const st_row *row = &r->rows[i];
		if (!row->failed)
			continue;
		if (!header++)
			fprintf(out, "\nFailures:\n");
		fprintf(out, "%s %s %s:\n", at_dtype_name(row->dt), st_case_name(row->c),
			row->template_name);
		for (size_t k = 0; k < row->nlisted; k++)
			fprintf(out, "  %s\n", row->failures[k]);
		if (row->failed > (long long)row->nlisted)
			fprintf(out, "  ... and %lld more\n", row->failed - (long long)row->nlisted);
	}
	for (size_t i = 0; i < r->nrows; i++) {
		const st_row *row = &r->rows[i];
		if (first_of_pair(r, i) && !tested(r, row->dt, row->template_name))
			fprintf(out, "\nNot tested: %s %s: no shape of the cases run reaches it (add one to "
				     "tuner/selftest/selftest_cases.c)\n", at_dtype_name(row->dt),
				row->template_name);
	}
	st_totals t = st_report_totals(r);
	if (t.not_run)
		fprintf(out, "\nNot run: %lld runs: %s\n", t.not_run, r->not_run_reason);
	if (st_report_exit_status(r) == 0)
		fprintf(out, "\nselftest: PASSED: all %lld runs passed\n", t.runs);
	else
		fprintf(out, "\nselftest: FAILED: %lld of %lld runs failed, %lld not run, %d "
			     "template%s untested\n", t.failed, t.runs, t.not_run, t.untested,
			t.untested == 1 ? "" : "s");
}
