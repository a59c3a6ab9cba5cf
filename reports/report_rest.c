/* A shape's rows as HTML or as compact text: see report_rest.h. */
#include "reports/report_rest.h"

#include <math.h>

#include "common/dtype.h"
#include "common/op.h"
#include "reports/numfmt.h"
#include "reports/ties.h"
#include "tuner/ops/ops.h"

size_t report_rest_plan(const rd_shape *s, vdict *v, long *ids)
{
	const rd_result *w = rd_shape_winner(s);
	size_t variants = 0, n_rest = 0;
	for (size_t i = 0; i < s->n_results; i++) {
		const rd_result *r = &s->results[i];
		ids[i] = -1;
		if (!r->timed || r->baseline)
			continue;
		/* a row of another sweep keeps its own % copy: HTML */
		if (variants++ < REPORT_INLINE_VARIANTS || r == w || r->sweep_id != s->sweep_id ||
		    ties_is_tie(s, r))
			continue;
		ids[i] = vdict_id(v, r->template_name, r->params);
		n_rest += ids[i] >= 0;
	}
	return n_rest;
}

/* A count as the table writes it: grouped, an en dash when unknown (-1). */
static void put_count(strbuf *out, int v)
{
	char b[NUMFMT_CAP];
	strbuf_printf(out, " %s", v < 0 ? fmt_grouped(b, NAN, 0) : fmt_count(b, v));
}

void report_rest_block(strbuf *out, const report_data *d, const char *op_name, const char *dtype,
		       const rd_shape *s, const long *ids, size_t n_rest)
{
	if (n_rest == 0)
		return;
	at_dtype dt;
	const at_op *op = op_find(op_name);
	double bytes = op && at_dtype_parse(dtype, &dt) == 0 ? at_op_bytes_moved(op, dt, s->M, s->N) : 0;
	const rd_sweep *sw = report_data_sweep(d, s->sweep_id);
	double copy = sw && isfinite(sw->copy_gbps) && sw->copy_gbps > 0 ? sw->copy_gbps : 0;
	strbuf_printf(out,
		      "<details class=\"rest\" data-n=\"%zu\"><summary>%zu more timed variants, "
		      "slower, as text (read it by <a href=\"#variants-list\">the variant "
		      "list</a>)</summary>\n"
		      "<pre class=\"rest\" data-bytes=\"%.0f\" data-copy=\"%.10g\">",
		      n_rest, n_rest, bytes, copy);
	char id[16], a[NUMFMT_CAP], b[NUMFMT_CAP], c[NUMFMT_CAP];
	for (size_t i = 0; i < s->n_results; i++) {
		const rd_result *r = &s->results[i];
		if (ids[i] < 0)
			continue;
		strbuf_printf(out, "%s %s %s %s", vdict_base36(id, ids[i]), fmt_us(a, r->time_us),
			      fmt_us(b, r->time_min_us), fmt_us(c, r->time_max_us));
		put_count(out, r->registers);
		if (r->smem_bytes != 0 || r->spill_bytes != 0) {
			put_count(out, r->smem_bytes);
			put_count(out, r->spill_bytes);
		}
		strbuf_puts(out, "\n");
	}
	strbuf_puts(out, "</pre></details>\n");
}
