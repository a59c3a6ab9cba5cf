/* Tests of run-time compilation of derived variants (dispatch/jit*.c) with
 * the real NVRTC and SQLite, no GPU: a variant compiles once and lands in
 * the persistent cache, a later handle loads it from there without
 * compiling, background jobs finish and bump the generation, a source that
 * does not compile is remembered as failed, and the modes follow the flags
 * and the environment. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dispatch/policy/derive.h"
#include "dispatch/runtime/jit.h"
#include "dispatch/runtime/jit_cache.h"
#include "dispatch/runtime/jit_tuned.h"
#include "dispatch/policy/template_table.h"
#include "tests/tmp_folder.h"

TestSuite(jit, .init = tmp_setup, .fini = tmp_teardown, .timeout = 120);

static atdi_jit_job block_job(long long elems)
{
	const tr_template *t = atdi_rules_find(tr_templates, tr_ntemplates, "softmax_block");
	cr_assert_not_null(t);
	atdi_jit_job job = { t, AT_F32, { 0 }, 90 };
	char params[128];
	snprintf(params, sizeof params, "threads=128 vec=4 elems_per_thread=%lld", elems);
	cr_assert_eq(atdi_params_parse(t, params, job.values), 0);
	return job;
}

static int cached_rows(const char *path)
{
	sqlite3 *db;
	cr_assert_eq(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	sqlite3_stmt *st;
	cr_assert_eq(sqlite3_prepare_v2(db, "SELECT count(*) FROM jit_kernels", -1, &st, NULL),
		     SQLITE_OK);
	cr_assert_eq(sqlite3_step(st), SQLITE_ROW);
	int n = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(db);
	return n;
}

static void fetch(atdi_jit *j, const atdi_jit_job *job)
{
	void *image = NULL;
	size_t size = 0;
	char why[1024] = "";
	cr_assert_eq(atdi_jit_get(j, job, &image, &size, why, sizeof why), ATD_OK, "%s", why);
	cr_assert_gt(size, 4);
	cr_assert_eq(memcmp(image, "\177ELF", 4), 0, "a cubin is an ELF image");
	free(image);
}

Test(jit, a_variant_compiles_once_and_a_later_handle_reads_it_from_the_cache)
{
	setenv("ATD_JIT_CACHE", tmp_path("cache/jit.db"), 1);
	unsetenv("ATD_JIT");
	atdi_jit a;
	cr_assert_eq(atdi_jit_init(&a, 0), 0);
	cr_assert_eq(a.mode, ATDI_JIT_BLOCK);
	atdi_jit_job job = block_job(24);
	fetch(&a, &job);
	cr_assert_eq(a.compiles, 1);
	fetch(&a, &job); /* from memory */
	cr_assert_eq(a.compiles, 1);
	atdi_jit_free(&a);
	cr_assert_eq(cached_rows(tmp_path("cache/jit.db")), 1);

	atdi_jit b;
	cr_assert_eq(atdi_jit_init(&b, 0), 0);
	fetch(&b, &job);
	cr_assert_eq(b.compiles, 0, "read from the persistent cache");
	atdi_jit_job other = block_job(28);
	fetch(&b, &other);
	cr_assert_eq(b.compiles, 1, "another variant is another kernel");
	atdi_jit_free(&b);
	cr_assert_eq(cached_rows(tmp_path("cache/jit.db")), 2);
	unsetenv("ATD_JIT_CACHE");
}

Test(jit, background_jobs_finish_and_bump_the_generation)
{
	setenv("ATD_JIT_CACHE", "off", 1);
	atdi_jit j;
	cr_assert_eq(atdi_jit_init(&j, ATD_OPEN_JIT_BACKGROUND), 0);
	cr_assert_eq(j.mode, ATDI_JIT_BACKGROUND);
	cr_assert_null(j.cache_path);
	atdi_jit_job job = block_job(20);
	unsigned g0 = atdi_jit_generation(&j);
	cr_assert_eq(atdi_jit_poll(&j, &job), 0, "queued, not ready");
	int state = 0;
	for (int i = 0; i < 6000 && state == 0; i++) {
		struct timespec ms10 = { 0, 10 * 1000 * 1000 };
		nanosleep(&ms10, NULL);
		state = atdi_jit_poll(&j, &job);
	}
	cr_assert_eq(state, 1, "compiled in the background");
	cr_assert_neq(atdi_jit_generation(&j), g0);
	cr_assert_eq(j.compiles, 1, "polling again queues nothing more");
	fetch(&j, &job);
	cr_assert_eq(j.compiles, 1);
	atdi_jit_free(&j);
	unsetenv("ATD_JIT_CACHE");
}

Test(jit, a_source_that_does_not_compile_fails_once_with_the_log)
{
	static const long long one[] = { 1 };
	static const tr_param params[] = { { "threads", one, 1, 1 } };
	static const tr_template broken = {
		"broken", "broken.cu", "#error this template is broken\n", 7u, params, 1, 0, 0,
		{ "threads", "1", "0", "0", "0", "1", "0" }, 0, 0, 0, 0, 0, 0,
	};
	setenv("ATD_JIT_CACHE", "off", 1);
	atdi_jit j;
	cr_assert_eq(atdi_jit_init(&j, 0), 0);
	atdi_jit_job job = { &broken, AT_F32, { 1 }, 90 };
	void *image = NULL;
	size_t size = 0;
	char why[1024] = "";
	cr_assert_eq(atdi_jit_get(&j, &job, &image, &size, why, sizeof why), ATD_ERR_NO_KERNEL);
	cr_assert(strstr(why, "this template is broken"), "%s", why);
	why[0] = '\0';
	cr_assert_eq(atdi_jit_get(&j, &job, &image, &size, why, sizeof why), ATD_ERR_NO_KERNEL);
	cr_assert(strstr(why, "this template is broken"), "remembered: %s", why);
	cr_assert_eq(j.compiles, 1);
	cr_assert_null(image);
	atdi_jit_free(&j);
	unsetenv("ATD_JIT_CACHE");
}

Test(jit, the_environment_overrides_the_open_flags)
{
	setenv("ATD_JIT_CACHE", "off", 1);
	atdi_jit j;
	setenv("ATD_JIT", "off", 1);
	cr_assert_eq(atdi_jit_init(&j, ATD_OPEN_JIT_BACKGROUND), 0);
	cr_assert_eq(j.mode, ATDI_JIT_OFF);
	atdi_jit_free(&j);
	setenv("ATD_JIT", "background", 1);
	cr_assert_eq(atdi_jit_init(&j, 0), 0);
	cr_assert_eq(j.mode, ATDI_JIT_BACKGROUND);
	atdi_jit_free(&j);
	unsetenv("ATD_JIT");
	cr_assert_eq(atdi_jit_init(&j, ATD_OPEN_NO_JIT), 0);
	cr_assert_eq(j.mode, ATDI_JIT_OFF);
	atdi_jit_free(&j);
	unsetenv("ATD_JIT_CACHE");
}

Test(jit, the_cache_path_follows_xdg_then_home)
{
	char path[4096];
	unsetenv("ATD_JIT_CACHE");
	setenv("XDG_CACHE_HOME", "/x/cache", 1);
	atdi_jit_cache_path(path, sizeof path);
	cr_assert_str_eq(path, "/x/cache/autotune/jit.db");
	unsetenv("XDG_CACHE_HOME");
	setenv("HOME", "/home/u", 1);
	atdi_jit_cache_path(path, sizeof path);
	cr_assert_str_eq(path, "/home/u/.cache/autotune/jit.db");
	setenv("ATD_JIT_CACHE", "/tmp/j.db", 1);
	atdi_jit_cache_path(path, sizeof path);
	cr_assert_str_eq(path, "/tmp/j.db");
	setenv("ATD_JIT_CACHE", "off", 1);
	atdi_jit_cache_path(path, sizeof path);
	cr_assert_str_eq(path, "");
	unsetenv("ATD_JIT_CACHE");
}

Test(jit, a_shape_tuned_online_is_kept_for_later_processes_by_gpu_model_and_shape)
{
	setenv("ATD_JIT_CACHE", tmp_path("jit.db"), 1);
	setenv("ATD_TUNE", "1", 1);
	atdi_jit j;
	cr_assert_eq(atdi_jit_init(&j, 0), 0);
	cr_assert_eq(j.tune, 1, "ATD_TUNE=1");
	cr_assert_eq(j.tune_budget_ms, 500, "the default budget");
	atd_gpu h100 = { "NVIDIA H100 80GB HBM3", 9, 0, 132, 80LL << 30 };
	atdi_tuned t = { "softmax_block", "threads=64 vec=4 elems_per_thread=24", 11.5 }, got;
	cr_assert_eq(atdi_jit_tuned_get(&j, &h100, ATDI_SOFTMAX, AT_BF16, 4096, 1500, &got), 0, "nothing yet");
	atdi_jit_tuned_put(&j, &h100, ATDI_SOFTMAX, AT_BF16, 4096, 1500, &t, 5);
	atdi_jit_free(&j);
	unsetenv("ATD_TUNE");
	cr_assert_eq(atdi_jit_init(&j, 0), 0);
	cr_assert_eq(j.tune, 0);
	cr_assert_eq(atdi_jit_tuned_get(&j, &h100, ATDI_SOFTMAX, AT_BF16, 4096, 1500, &got), 1);
	cr_assert_str_eq(got.template_name, "softmax_block");
	cr_assert_str_eq(got.params, "threads=64 vec=4 elems_per_thread=24");
	cr_assert_float_eq(got.time_us, 11.5, 1e-9);
	cr_assert_eq(atdi_jit_tuned_get(&j, &h100, ATDI_SOFTMAX, AT_F16, 4096, 1500, &got), 0, "another dtype");
	cr_assert_eq(atdi_jit_tuned_get(&j, &h100, ATDI_SOFTMAX, AT_BF16, 4096, 1501, &got), 0, "another N");
	atd_gpu other = h100;
	other.sm_count = 114;
	cr_assert_eq(atdi_jit_tuned_get(&j, &other, ATDI_SOFTMAX, AT_BF16, 4096, 1500, &got), 0, "another model");
	t.time_us = 10.0;
	atdi_jit_tuned_put(&j, &h100, ATDI_SOFTMAX, AT_BF16, 4096, 1500, &t, 5);
	cr_assert_eq(atdi_jit_tuned_get(&j, &h100, ATDI_SOFTMAX, AT_BF16, 4096, 1500, &got), 1);
	cr_assert_float_eq(got.time_us, 10.0, 1e-9, "replaced");
	atdi_jit_free(&j);
	setenv("ATD_TUNE_BUDGET_MS", "50", 1);
	cr_assert_eq(atdi_jit_init(&j, ATD_OPEN_TUNE), 0);
	cr_assert_eq(j.tune, 1, "the flag");
	cr_assert_float_eq(j.tune_budget_ms, 50, 1e-9);
	atdi_jit_free(&j);
	unsetenv("ATD_TUNE_BUDGET_MS");
	unsetenv("ATD_JIT_CACHE");
}

typedef struct getter {
	atdi_jit *j;
	atdi_jit_job job;
	atd_status s;
} getter;

static void *get_thread(void *arg)
{
	getter *g = arg;
	void *image = NULL;
	size_t size = 0;
	char why[1024];
	g->s = atdi_jit_get(g->j, &g->job, &image, &size, why, sizeof why);
	free(image);
	return NULL;
}

Test(jit, threads_asking_for_one_variant_at_once_compile_it_once)
{
	setenv("ATD_JIT_CACHE", "off", 1);
	atdi_jit j;
	cr_assert_eq(atdi_jit_init(&j, 0), 0);
	getter g[4];
	pthread_t th[4];
	for (int i = 0; i < 4; i++) {
		g[i] = (getter){ &j, block_job(12), ATD_ERR_NO_KERNEL };
		cr_assert_eq(pthread_create(&th[i], NULL, get_thread, &g[i]), 0);
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		cr_assert_eq(g[i].s, ATD_OK);
	}
	cr_assert_eq(j.compiles, 1, "the others waited for the first's compile");
	atdi_jit_free(&j);
	unsetenv("ATD_JIT_CACHE");
}

static double now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

Test(jit, a_wait_returns_what_is_built_by_then_and_the_rest_finish_on_their_own)
{
	setenv("ATD_JIT_CACHE", "off", 1);
	atdi_jit j;
	cr_assert_eq(atdi_jit_init(&j, 0), 0);
	atdi_jit_job jobs[3] = { block_job(4), block_job(8), block_job(16) };
	fetch(&j, &jobs[0]); /* built before: ready at once */
	int ready[3] = { 9, 9, 9 };
	double t0 = now_ms();
	/* a compile takes 100 ms or more: none of the others is built in 1 */
	cr_assert_eq(atdi_jit_build_within(&j, jobs, 3, 1, ready), 1);
	cr_assert_lt(now_ms() - t0, 80, "the wait is bounded, not the compiles");
	cr_assert_eq(ready[0], 1);
	cr_assert_eq(ready[1], 0, "still compiling");
	cr_assert_eq(ready[2], 0);
	/* no wait: until all have ended, the two left compiled once each */
	cr_assert_eq(atdi_jit_build_within(&j, jobs, 3, -1, ready), 3);
	cr_assert_eq(j.compiles, 3);
	atdi_jit_free(&j);
	unsetenv("ATD_JIT_CACHE");
}

Test(jit, freeing_waits_for_compiles_left_past_a_wait)
{
	setenv("ATD_JIT_CACHE", "off", 1);
	atdi_jit j;
	cr_assert_eq(atdi_jit_init(&j, 0), 0);
	atdi_jit_job jobs[2] = { block_job(4), block_job(8) };
	int ready[2];
	cr_assert_eq(atdi_jit_build_within(&j, jobs, 2, 0, ready), 0);
	cr_assert_gt(j.detached, 0, "left compiling");
	atdi_jit_free(&j); /* the threads hold j: freed only after them (ASan would say) */
	unsetenv("ATD_JIT_CACHE");
}
