/* Assembling the report page from its sections, and writing it: see
 * report.h. The sections live in report_sweep.c, report_curve.c,
 * report_heat.c and report_shapes.c. */
#include "reports/report.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "common/dtype.h"
#include "reports/html.h"
#include "reports/numfmt.h"
#include "reports/outfile.h"
#include "reports/report_curve.h"
#include "reports/report_heat.h"
#include "reports/report_rest.h"
#include "reports/report_shapes.h"
#include "reports/report_sweep.h"

static size_t shape_count(const report_data *d)
{
	size_t n = 0;
	for (size_t i = 0; i < d->n_groups; i++)
		n += d->groups[i].n_shapes;
	return n;
}

static void header(strbuf *out, const report_data *d, const report_options *opt)
{
	char a[NUMFMT_CAP], b[NUMFMT_CAP], c[NUMFMT_CAP];
	strbuf_puts(out, "<header>\n<h1>Autotuning report</h1>\n<p class=\"sub\">Database <code>");
	html_escape(out, opt->db_path);
	strbuf_printf(out, "</code> \xc2\xb7 %zu GPU%s \xc2\xb7 %s sweep%s \xc2\xb7 %s shapes \xc2\xb7 %s "
			   "results</p>\n",
		      d->n_gpus, d->n_gpus == 1 ? "" : "s", fmt_count(a, (long long)d->n_sweeps),
		      d->n_sweeps == 1 ? "" : "s", fmt_count(b, (long long)shape_count(d)),
		      fmt_count(c, d->n_results));
	if (opt->peers) {
		strbuf_puts(out, "<p class=\"sub\">Peers from <code>");
		html_escape(out, opt->peers->path);
		strbuf_puts(out, "</code>: their clean-L2 times on the curves and in the tables "
				 "(<a href=\"#about-peers\">how they were timed</a>).</p>\n");
	}
	strbuf_puts(out, "</header>\n");
}

static int gpu_has_content(const report_data *d, size_t gi)
{
	for (size_t i = 0; i < d->n_groups; i++)
		if (d->groups[i].gpu == gi)
			return 1;
	for (size_t i = 0; i < d->n_sweeps; i++)
		if (d->sweeps[i].gpu_id == d->gpus[gi].id)
			return 1;
	return 0;
}

static void group_name(strbuf *out, const rd_group *g)
{
	html_escape(out, g->op);
	strbuf_puts(out, " \xc2\xb7 ");
	html_escape(out, g->dtype);
}

static void contents(strbuf *out, const report_data *d)
{
	strbuf_puts(out, "<nav id=\"contents\"><strong>Contents</strong>\n<ul>\n");
	for (size_t gi = 0; gi < d->n_gpus; gi++) {
		if (!gpu_has_content(d, gi))
			continue;
		strbuf_printf(out, "<li><a href=\"#gpu%zu\">", gi);
		html_escape(out, d->gpus[gi].name);
		strbuf_printf(out, "</a>: <a href=\"#gpu%zu-sweeps\">sweeps</a>", gi);
		for (size_t i = 0; i < d->n_groups; i++) {
			if (d->groups[i].gpu != gi)
				continue;
			strbuf_printf(out, " \xc2\xb7 <a href=\"#g%zu\">", i);
			group_name(out, &d->groups[i]);
			strbuf_puts(out, "</a>");
		}
		strbuf_puts(out, "</li>\n");
	}
	strbuf_puts(out, "<li><a href=\"#about\">How to read this report</a> (GB/s, winners, ties, "
			 "the heat map)</li>\n</ul></nav>\n");
}

static void group_intro(strbuf *out, const rd_group *g)
{
	at_dtype dt;
	char a[NUMFMT_CAP], b[NUMFMT_CAP];
	long long nmin = g->shapes[0].N, nmax = nmin;
	for (size_t i = 0; i < g->n_shapes; i++) {
		nmin = g->shapes[i].N < nmin ? g->shapes[i].N : nmin;
		nmax = g->shapes[i].N > nmax ? g->shapes[i].N : nmax;
	}
	strbuf_printf(out, "<p class=\"sub\">%zu shape%s, N from %s to %s", g->n_shapes,
		      g->n_shapes == 1 ? "" : "s", fmt_count(a, nmin), fmt_count(b, nmax));
	if (at_dtype_parse(g->dtype, &dt) == 0)
		strbuf_printf(out, "; %zu bytes per element", at_dtype_size(dt));
	strbuf_puts(out, ".</p>\n");
}

static int group_section(strbuf *out, const report_data *d, size_t gi,
			 const report_options *opt, vdict *variants, at_error *err)
{
	const rd_group *g = &d->groups[gi];
	strbuf_printf(out, "<section id=\"g%zu\" class=\"group\">\n<h3>", gi);
	group_name(out, g);
	strbuf_puts(out, "</h3>\n");
	if (g->n_shapes == 0) { /* not reached: a group exists for its shapes */
		strbuf_puts(out, "</section>\n");
		return 0;
	}
	group_intro(out, g);
	strbuf_puts(out, "<div class=\"plots\">\n");
	size_t hs = report_heat_shape(g, opt->heat_M, opt->heat_N);
	if (report_curves(out, d, gi, opt->peers, err) ||
	    report_heatmap(out, d, gi, hs, opt->heat_M, opt->heat_N, err))
		return -1;
	strbuf_puts(out, "</div>\n");
	report_peers_summary(out, d, gi, opt->peers);
	strbuf_printf(out, "<h4 id=\"g%zu-winners-h\">Winners</h4>\n", gi);
	report_winners_table(out, d, gi, opt->peers);
	strbuf_printf(out, "<h4 id=\"g%zu-shapes\">Every variant, per shape</h4>\n"
			   "<p class=\"note\">Click a shape to open its table: timed results "
			   "sorted by median time (baselines among them), then the ones that failed. "
			   "The table holds the %d fastest variants, the winner's ties and the "
			   "baselines; the slower variants follow it as text, which a button puts "
			   "into the table. With JavaScript, a click on a column header sorts by it "
			   "and a click on a row highlights it.</p>\n",
		      gi, REPORT_INLINE_VARIANTS);
	report_shape_tables(out, d, gi, opt->peers, variants);
	strbuf_puts(out, "</section>\n");
	return 0;
}

static void about(strbuf *out, const report_options *opt)
{
	strbuf_puts(
		out,
		"<section id=\"about\">\n<h2>How to read this report</h2>\n<ul>\n"
		"<li><strong>GB/s</strong> = 2\xc2\xb7M\xc2\xb7N\xc2\xb7" "element size / median time: "
		"the bytes a fused softmax must move (each element read once and written once). "
		"<strong>% copy</strong> compares it with the device-to-device copy bandwidth "
		"the sweep measured (bytes read + written); above 100% is possible, the copy "
		"being a 1 GiB <code>cuMemcpyDtoD</code>.</li>\n"
		"<li><strong>Times</strong> are in microseconds: the median of the repetitions, "
		"with their minimum and maximum, each launch timed with CUDA events after the L2 "
		"was flushed. Every variant was checked against a CPU reference before it was "
		"timed.</li>\n"
		"<li>The <strong>winner</strong> of a shape is, among the variants that passed "
		"their check and are within the shape's noise band of the fastest, the one with "
		"the fewest registers (then the fastest). Baselines (the naive five-kernel softmax, "
		"cuDNN) are timed the same way and shown for comparison; they never win.</li>\n"
		"<li id=\"tie-rule\">A variant <strong>ties</strong> with the winner when its median "
		"is within the shape's <strong>noise band</strong> of the fastest variant's median: "
		"the difference is within the timing noise. The band is what the sweep measured "
		"(the spread of its four finalists' interleaved repetitions, taken between 0.5% "
		"and 1%); a database that stored none counts 1%, the most it can be. Baselines "
		"are not marked as ties.</li>\n"
		"<li>The <strong>heat map</strong> shows, at one shape (the largest per dtype unless "
		"chosen with <code>autotune report --heatmap MxN</code>), the median time of the "
		"winner's template over two of its parameters: <code>threads</code> across (or the "
		"first parameter that varies) and down the parameter that separates the most "
		"variants. Each cell is the best variant with those two values.</li>\n"
		"<li><strong>Not timed</strong>: <code>compile_failed</code> (NVRTC rejected it), "
		"<code>check_failed</code> (wrong output), <code>launch_failed</code> (the launch "
		"failed), each with its reason.</li>\n");
	if (opt->peers)
		strbuf_puts(
			out,
			"<li id=\"about-peers\"><strong>Peers</strong> (rings on the curves, rows marked "
			"<em>peer</em>) are what a PyTorch user runs today: <code>torch.softmax</code>, the "
			"Triton tutorial's fused softmax and <code>torch.compile</code>, timed by "
			"<code>python -m autotune_dispatch.peers</code> on the same kind of GPU: each "
			"output checked against float64 first, then the median of its repetitions, each "
			"launch timed with CUDA events after a 256 MiB read evicted the L2 (clean L2, as "
			"the sweep's flush; the CSV also has times after a 256 MiB write, which this "
			"report does not use). <strong>vs best peer</strong> is the fastest peer's time "
			"divided by the winner's, at the same shape: above 1\xc3\x97, the winner is "
			"faster. The two harnesses differ (the sweep times the kernel alone, the peers "
			"module a Python call), which favours neither by more than the launch "
			"overhead.</li>\n");
	strbuf_puts(out, "</ul>\n</section>\n");
}

int report_render(const report_data *d, const report_options *opt, strbuf *out, at_error *err)
{
	html_page_begin(out, "autotune report");
	header(out, d, opt);
	contents(out, d);
	vdict variants;
	vdict_init(&variants);
	for (size_t gi = 0; gi < d->n_gpus; gi++) {
		if (!gpu_has_content(d, gi))
			continue;
		strbuf_printf(out, "<section id=\"gpu%zu\" class=\"gpu\">\n<h2>", gi);
		html_escape(out, d->gpus[gi].name);
		strbuf_puts(out, "</h2>\n");
		report_gpu_facts(out, &d->gpus[gi]);
		report_sweeps(out, d, gi);
		for (size_t i = 0; i < d->n_groups; i++)
			if (d->groups[i].gpu == gi && group_section(out, d, i, opt, &variants, err)) {
				vdict_free(&variants);
				return -1;
			}
		strbuf_puts(out, "</section>\n");
	}
	vdict_write(out, &variants);
	vdict_free(&variants);
	about(out, opt);
	strbuf_puts(out, "<footer><p class=\"note\">Written by <code>autotune report</code>");
	if (opt->tool_version) {
		strbuf_puts(out, " ");
		html_escape(out, opt->tool_version);
	}
	strbuf_puts(out, ".</p></footer>\n");
	html_page_end(out);
	return 0;
}

/* Whether path names the same file as the database (so must not be written). */
static int is_the_database(const char *path, const char *db_path)
{
	struct stat a, b;
	return stat(path, &a) == 0 && stat(db_path, &b) == 0 && a.st_dev == b.st_dev &&
	       a.st_ino == b.st_ino;
}

/* Whether the peers meet the database: a GPU of theirs is one of its GPUs
 * (any, when the CSV names none, which only a database of one GPU allows),
 * and one of their shapes is tuned there. */
static int check_peers(const peer_set *p, const report_data *d, const char *db_path,
		       at_error *err)
{
	if (!p->has_gpu && d->n_gpus > 1)
		return at_error_set(err, "%s has no gpu column and %s has %zu GPUs: which one the peers "
				    "ran on is unknown (python -m autotune_dispatch.peers writes the "
				    "column)", p->path, db_path, d->n_gpus);
	for (size_t gi = 0; gi < d->n_groups; gi++) {
		const rd_group *g = &d->groups[gi];
		for (size_t i = 0; i < g->n_shapes; i++)
			if (peers_best(p, d->gpus[g->gpu].name, g->dtype, g->shapes[i].M,
				       g->shapes[i].N))
				return 0;
	}
	if (p->has_gpu) {
		int gpu_known = 0;
		for (size_t k = 0; k < d->n_gpus && !gpu_known; k++)
			for (size_t i = 0; i < p->n_rows && !gpu_known; i++)
				gpu_known = strcmp(p->rows[i].gpu, d->gpus[k].name) == 0;
		if (!gpu_known)
			return at_error_set(err, "%s: its GPU (%s) is not one of %s's", p->path,
					    p->rows[0].gpu, db_path);
	}
	return at_error_set(err, "%s: none of its shapes with a timed peer (clean L2) is tuned in %s",
			    p->path, db_path);
}

int report_write(const report_options *opt, at_error *err)
{
	tdb *db;
	if (tdb_open_readonly(opt->db_path, &db, err))
		return -1;
	if (is_the_database(opt->out_path, opt->db_path)) {
		tdb_close(db);
		return at_error_set(err, "%s: cannot write: it is the database", opt->out_path);
	}
	report_data d;
	int rc = report_data_load(db, opt->db_path, &d, err);
	tdb_close(db);
	if (rc)
		return -1;
	if (d.n_results == 0) {
		report_data_free(&d);
		return at_error_set(err, "%s has no results: run autotune sweep first", opt->db_path);
	}
	peer_set peers = { 0 };
	report_options with_peers = *opt;
	if (opt->peers_path) {
		if (peers_load(opt->peers_path, &peers, err) || check_peers(&peers, &d, opt->db_path, err)) {
			peers_free(&peers);
			report_data_free(&d);
			return -1;
		}
		with_peers.peers = &peers;
	}
	strbuf page = { 0 };
	rc = report_render(&d, &with_peers, &page, err);
	if (rc == 0 && strcmp(opt->out_path, "-") == 0) {
		if (fwrite(page.data, 1, page.len, stdout) != page.len || fflush(stdout) != 0)
			rc = at_error_set(err, "standard output: cannot write");
	} else if (rc == 0) {
		rc = outfile_write(opt->out_path, page.data, page.len, err);
	}
	strbuf_free(&page);
	peers_free(&peers);
	report_data_free(&d);
	return rc;
}
