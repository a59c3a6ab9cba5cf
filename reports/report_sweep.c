/* The GPU and sweep facts of the report: see report_sweep.h. */
#include "reports/report_sweep.h"

#include "reports/html.h"
#include "reports/numfmt.h"

void report_gpu_facts(strbuf *out, const rd_gpu *gpu)
{
	char mem[NUMFMT_CAP];
	strbuf_printf(out,
		      "<p class=\"sub\">Compute capability %d.%d \xc2\xb7 %d SMs \xc2\xb7 %s of memory</p>\n",
		      gpu->cc_major, gpu->cc_minor, gpu->sm_count, fmt_bytes(mem, gpu->mem_bytes));
}

static void fact_text(strbuf *out, const char *name, const char *text)
{
	strbuf_printf(out, "<dt>%s</dt><dd>", name);
	html_escape(out, text);
	strbuf_puts(out, "</dd>\n");
}

static void one_sweep(strbuf *out, const rd_sweep *s, const rd_gpu *gpu)
{
	char a[NUMFMT_CAP], b[NUMFMT_CAP], c[NUMFMT_CAP], e[NUMFMT_CAP], f[NUMFMT_CAP];
	strbuf_printf(out, "<div id=\"sweep-%lld\" class=\"sweep\">\n<h4>Sweep %lld</h4>\n"
			   "<dl class=\"facts\">\n",
		      s->id, s->id);
	strbuf_puts(out, "<dt>GPU</dt><dd>");
	html_escape(out, gpu->name);
	strbuf_printf(out, " (compute capability %d.%d, %d SMs, %s)</dd>\n", gpu->cc_major,
		      gpu->cc_minor, gpu->sm_count, fmt_bytes(a, gpu->mem_bytes));
	strbuf_printf(out, "<dt>driver</dt><dd>%s (%d)</dd>\n", fmt_driver(a, s->driver_version),
		      s->driver_version);
	fact_text(out, "NVRTC", s->nvrtc_version);
	fact_text(out, "autotune", s->tool_version);
	fact_text(out, "started (UTC)", s->started_at);
	fact_text(out, "finished (UTC)",
		  s->finished_at ? s->finished_at : "not finished (interrupted or still running)");
	strbuf_printf(out, "<dt>variants</dt><dd>%s runs of %s distinct variants over %s shapes; %s "
			   "baseline runs; %s not timed (failed)</dd>\n",
		      fmt_count(a, s->variant_runs), fmt_count(b, s->distinct_variants),
		      fmt_count(c, s->shapes), fmt_count(e, s->baseline_runs),
		      fmt_count(f, s->failed));
	strbuf_printf(out, "<dt>time</dt><dd>%s compiling, %s benchmarking</dd>\n",
		      fmt_seconds(a, s->compile_s), fmt_seconds(b, s->bench_s));
	strbuf_printf(out, "<dt>copy ceiling</dt><dd>%s GB/s (device-to-device, bytes read + "
			   "written)</dd>\n",
		      fmt_gbps(a, s->copy_gbps));
	strbuf_puts(out, "<dt>config</dt><dd><code>");
	html_escape(out, s->config_path);
	strbuf_puts(out, "</code></dd>\n</dl>\n<details class=\"config\"><summary>config text</summary>"
			 "<pre>");
	html_escape(out, s->config_text);
	strbuf_puts(out, "</pre></details>\n</div>\n");
}

void report_sweeps(strbuf *out, const report_data *d, size_t gi)
{
	const rd_gpu *gpu = &d->gpus[gi];
	strbuf_printf(out, "<section id=\"gpu%zu-sweeps\" class=\"sweeps\">\n<h3>Sweeps</h3>\n", gi);
	size_t n = 0;
	for (size_t i = 0; i < d->n_sweeps; i++)
		if (d->sweeps[i].gpu_id == gpu->id) {
			one_sweep(out, &d->sweeps[i], gpu);
			n++;
		}
	if (n == 0)
		strbuf_puts(out, "<p class=\"note\">No sweep recorded for this GPU.</p>\n");
	strbuf_puts(out, "</section>\n");
}
