/* `autotune model eval --model FILE` and the averaged fit (--fits, --seed)
 * as a user runs them on the example H100 database (no GPU): a model
 * written by `model fit` chooses at every shape of a database without a
 * fit (a held-out measurement where the shapes are not its own), and bad
 * model files or fit counts are refused with a reason. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "tests/test_run_fixture.h"
#include "tests/tmp_folder.h"

TestSuite(model_eval_cli, .init = tmp_setup, .fini = tmp_teardown, .timeout = 120);

#define EXAMPLE "results/example/h100-default.db"

Test(model_eval_cli, a_fitted_model_file_chooses_at_every_shape_held_out)
{
	const char *model = tmp_path("m.txt");
	tr_result r = RUN("model", "fit", "--db", EXAMPLE, "--trees", "20", "--depth", "4", "--fits",
			  "2", "--seed", "5", "-o", model);
	tr_expect_status(&r, 0);
	tr_expect_in(r.err, "132 shapes");
	tr_free(&r);
	r = RUN("model", "eval", "--db", EXAMPLE, "--model", model, "--worst", "2");
	tr_expect_status(&r, 0);
	char want[4200];
	snprintf(want, sizeof want, "held out on NVIDIA H100 80GB HBM3: 132 tuned shapes");
	tr_expect_in(r.out, want);
	snprintf(want, sizeof want, "every shape chosen by %s\n", model);
	tr_expect_in(r.out, want);
	tr_expect_in(r.out, "rules choice (every valid variant): geomean winner/chosen ");
	tr_expect_in(r.out, "worst 2 of the rules choice:\n");
	tr_free(&r);
}

Test(model_eval_cli, a_model_file_that_does_not_read_is_refused)
{
	const char *bad = tmp_path("bad.txt");
	FILE *f = fopen(bad, "w");
	cr_assert(f);
	fputs("perf_model 1\nnot a model\n", f);
	cr_assert_eq(fclose(f), 0);
	tr_result r = RUN("model", "eval", "--db", EXAMPLE, "--model", bad);
	cr_assert_neq(r.status, 0);
	cr_assert_str_empty(r.out);
	cr_assert(strlen(r.err) > 0, "no reason given");
	tr_free(&r);
	r = RUN("model", "eval", "--db", EXAMPLE, "--model", tmp_path("missing.txt"));
	cr_assert_neq(r.status, 0);
	tr_expect_in(r.err, "missing.txt");
	tr_free(&r);
}

Test(model_eval_cli, a_fit_count_or_seed_out_of_range_is_a_usage_error)
{
	static const char *const cases[][3] = {
		{ "--fits", "0", "--fits" },
		{ "--fits", "65", "--fits" },
		{ "--seed", "0", "--seed" },
		{ "--part", "3/2", "--part expects K/N" },
		{ "--part", "0/2", "--part expects K/N" },
		{ "--part", "1/2x", "--part expects K/N" },
	};
	tr_expect_usage_errors("model", cases, sizeof cases / sizeof *cases);
}

Test(model_eval_cli, a_ranking_other_than_mean_or_worst_is_a_usage_error)
{
	tr_result r = RUN("model", "eval", "--db", EXAMPLE, "--rank", "best");
	tr_expect_status(&r, 2);
	tr_expect_in(r.err, "--rank best: expected mean or worst");
	cr_assert_str_eq(r.out, "");
	tr_free(&r);
}

Test(model_eval_cli, a_model_of_several_fits_reports_its_other_ranking_too, .timeout = 120)
{
	const char *model = tmp_path("m.txt");
	tr_result r = RUN("model", "fit", "--db", EXAMPLE, "--trees", "10", "--depth", "4", "--fits",
			  "2", "--rank", "worst", "-o", model);
	tr_expect_status(&r, 0);
	tr_free(&r);
	r = RUN("model", "eval", "--db", EXAMPLE, "--model", model, "--worst", "0");
	tr_expect_status(&r, 0);
	tr_expect_in(r.out, "rules choice (every valid variant): geomean winner/chosen ");
	tr_expect_in(r.out, "rules choice, the fits' mean ranking: geomean winner/chosen ");
	tr_free(&r);
}
