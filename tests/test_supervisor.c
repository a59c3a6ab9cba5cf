/* The sweep's process supervisor, driven by fake workers (test doubles for
 * the GPU worker) that crash, hang, lose their context or fail as told. */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tuner/sweep/interrupt.h"
#include "tuner/sweep/supervisor.h"

typedef enum action { RUN_OK, RUN_CRASH, RUN_HANG, RUN_LOSE_CONTEXT, RUN_CRASH_ON_CPU_ONCE } action;

#define MAX_SHAPES 64
#define VARIANTS 4

typedef struct script {
	action what[MAX_SHAPES][VARIANTS];
	int fatal_at_start_device; /* -1: none */
	int fatal_on_shape;        /* -1: none */
	int sleep_ms;              /* per shape, so that several workers share the work */
	char marker[256];          /* RUN_CRASH_ON_CPU_ONCE: exists after the first crash */
	int interrupt_on_shape;    /* -1: none; else Ctrl-C the supervisor during it */
	int ignore_term;           /* the worker ignores the supervisor's SIGTERM */
	char stored[256];          /* written by a worker that stopped when asked */
} script;

/* Dies of SIGSEGV, as a crashing worker does (also under ASan, whose own
 * handler would otherwise turn it into an exit status). */
static void crash(void)
{
	signal(SIGSEGV, SIG_DFL);
	raise(SIGSEGV);
}

static void send_msg(int out, worker_msg *m)
{
	cr_assert_eq(worker_msg_write(out, m), 0);
}

/* Tunes a shape the way the real worker reports it: each variant announced
 * before it "runs"; the excluded ones listed in winner_params as
 * "index:reason;" so that tests can see what the supervisor sent. */
/* As a user's Ctrl-C reaches the supervisor (a terminal sends it to the
 * workers too, which the supervisor's SIGTERM stands for here), then waits
 * to be told to stop: "stores what it compiled" (sc->stored) and returns
 * 2, or is killed when it ignores SIGTERM. */
static int interrupted_shape(const script *sc)
{
	kill(getppid(), SIGINT);
	for (int i = 0; i < 1000 && !interrupt_caught(); i++)
		usleep(10000);
	cr_assert(interrupt_caught(), "the worker was not told to stop");
	FILE *f = fopen(sc->stored, "w");
	if (f)
		fclose(f);
	return 2;
}

static int fake_shape(const script *sc, const worker_start *st, int out, int shape,
		      const int *excluded, char reasons[VARIANTS][512])
{
	if (sc->interrupt_on_shape == shape)
		return interrupted_shape(sc);
	if (sc->fatal_on_shape == shape) {
		worker_msg f = worker_msg_make(WMSG_FATAL);
		snprintf(f.text, sizeof f.text, "database is locked (shape %d)", shape);
		send_msg(out, &f);
		return -1;
	}
	worker_msg done = worker_msg_make(WMSG_SHAPE_DONE);
	done.shape = shape;
	for (int v = 0; v < VARIANTS; v++) {
		if (excluded[v]) {
			size_t len = strlen(done.summary.winner_params);
			snprintf(done.summary.winner_params + len, sizeof done.summary.winner_params - len,
				 "%d:%.60s;", v, reasons[v]);
			continue;
		}
		action a = sc->what[shape][v];
		if (a == RUN_CRASH_ON_CPU_ONCE && access(sc->marker, F_OK) != 0) {
			FILE *f = fopen(sc->marker, "w");
			if (f)
				fclose(f);
			crash();
		}
		worker_msg g = worker_msg_make(WMSG_GPU);
		g.shape = shape;
		g.variant = v;
		snprintf(g.text, sizeof g.text, "fake v=%d", v);
		send_msg(out, &g);
		if (a == RUN_CRASH)
			crash();
		if (a == RUN_HANG)
			sleep(60);
		if (a == RUN_LOSE_CONTEXT) {
			worker_msg l = worker_msg_make(WMSG_CONTEXT_LOST);
			l.shape = shape;
			l.variant = v;
			snprintf(l.text, sizeof l.text, "an illegal memory access was encountered");
			send_msg(out, &l);
			return -1;
		}
		done.summary.passed++;
		worker_msg c = worker_msg_make(WMSG_CPU); /* as the real worker after a check */
		send_msg(out, &c);
	}
	if (sc->sleep_ms)
		usleep((useconds_t)sc->sleep_ms * 1000);
	done.summary.variants = VARIANTS;
	done.summary.time_us = st->device; /* who tuned it */
	done.stats.compiled = 1;
	snprintf(done.text, sizeof done.text, "ok");
	send_msg(out, &done);
	return 0;
}

static int fake_worker(void *arg, const worker_start *st, int in, int out)
{
	const script *sc = arg;
	if (sc->ignore_term)
		signal(SIGTERM, SIG_IGN);
	if (sc->fatal_at_start_device == st->device) {
		worker_msg f = worker_msg_make(WMSG_FATAL);
		snprintf(f.text, sizeof f.text, "no GPU %d on this machine", st->device);
		send_msg(out, &f);
		return 1;
	}
	worker_msg ready = worker_msg_make(WMSG_READY);
	ready.sweep_id = st->sweep_id ? st->sweep_id : 100 + st->device;
	ready.copy_gbps = 3000 + st->device;
	send_msg(out, &ready);
	int excluded[VARIANTS] = { 0 };
	char reasons[VARIANTS][512];
	worker_msg m;
	while (worker_msg_read(in, &m) == 0 && m.type != WMSG_QUIT) {
		if (m.type == WMSG_EXCLUDE) {
			cr_assert(m.variant >= 0 && m.variant < VARIANTS);
			excluded[m.variant] = 1;
			snprintf(reasons[m.variant], sizeof reasons[m.variant], "%.500s", m.text);
		} else if (m.type == WMSG_TUNE) {
			int rc = fake_shape(sc, st, out, m.shape, excluded, reasons);
			if (rc)
				return rc;
			memset(excluded, 0, sizeof excluded);
		}
	}
	return 0;
}

static script *new_script(void)
{
	script *sc = calloc(1, sizeof *sc);
	sc->fatal_at_start_device = -1;
	sc->fatal_on_shape = -1;
	sc->interrupt_on_shape = -1;
	snprintf(sc->marker, sizeof sc->marker, "/tmp/at-supervisor-%d-%ld", (int)getpid(),
		 (long)time(NULL));
	unlink(sc->marker);
	snprintf(sc->stored, sizeof sc->stored, "%.240s-stored", sc->marker);
	unlink(sc->stored);
	return sc;
}

static supervisor_options options(script *sc, const int *devices, int ndevices, size_t nshapes)
{
	return (supervisor_options){ .devices = devices, .ndevices = ndevices, .nshapes = nshapes,
				     .watchdog_ms = 5000, .max_deaths = 3, .quiet = 1,
				     .worker_main = fake_worker, .worker_arg = sc };
}

Test(supervisor, runs_every_shape_once_with_one_worker)
{
	script *sc = new_script();
	int dev = 0;
	supervisor_options o = options(sc, &dev, 1, 10);
	supervisor_report r;
	at_error err = { { 0 } };
	cr_assert_eq(supervise(&o, &r, &err), 0, "%s", err.msg);
	for (size_t i = 0; i < 10; i++) {
		cr_assert_eq(r.shapes[i].state, SHAPE_TUNED);
		cr_assert_eq(r.shapes[i].summary.passed, VARIANTS);
		cr_assert_str_empty(r.shapes[i].summary.winner_params);
	}
	cr_assert_eq(r.restarts, 0);
	cr_assert_eq(r.slots[0].sweep_id, 100);
	cr_assert_float_eq(r.slots[0].copy_gbps, 3000, 1e-9);
	cr_assert_eq(r.stats.compiled, 10);
	supervisor_report_free(&r);
	free(sc);
}

Test(supervisor, a_crashing_variant_is_excluded_and_the_worker_restarted)
{
	script *sc = new_script();
	sc->what[2][1] = RUN_CRASH;
	sc->what[5][3] = RUN_CRASH;
	int dev = 0;
	supervisor_options o = options(sc, &dev, 1, 8);
	supervisor_report r;
	at_error err = { { 0 } };
	cr_assert_eq(supervise(&o, &r, &err), 0, "%s", err.msg);
	cr_assert_eq(r.restarts, 2);
	cr_assert_eq(r.abandoned, 0);
	for (size_t i = 0; i < 8; i++)
		cr_assert_eq(r.shapes[i].state, SHAPE_TUNED, "shape %zu", i);
	cr_assert_eq(r.shapes[2].summary.passed, VARIANTS - 1);
	cr_assert_eq(r.shapes[2].deaths, 1);
	cr_assert(strncmp(r.shapes[2].summary.winner_params, "1:", 2) == 0, "%s",
		  r.shapes[2].summary.winner_params);
	cr_assert(strstr(r.shapes[2].summary.winner_params, "signal 11"), "%s",
		  r.shapes[2].summary.winner_params);
	cr_assert(strncmp(r.shapes[5].summary.winner_params, "3:", 2) == 0);
	cr_assert_str_empty(r.shapes[3].summary.winner_params); /* exclusions are per shape */
	/* the restarted worker continues the first one's sweep */
	cr_assert_eq(r.slots[0].sweep_id, 100);
	supervisor_report_free(&r);
	free(sc);
}

Test(supervisor, a_lost_context_is_reported_with_its_reason)
{
	script *sc = new_script();
	sc->what[0][2] = RUN_LOSE_CONTEXT;
	int dev = 0;
	supervisor_options o = options(sc, &dev, 1, 2);
	supervisor_report r;
	at_error err = { { 0 } };
	cr_assert_eq(supervise(&o, &r, &err), 0, "%s", err.msg);
	cr_assert_eq(r.shapes[0].state, SHAPE_TUNED);
	cr_assert_str_eq(r.shapes[0].summary.winner_params,
			 "2:an illegal memory access was encountered;");
	cr_assert_eq(r.restarts, 1);
	supervisor_report_free(&r);
	free(sc);
}

Test(supervisor, a_hanging_variant_is_killed_by_the_watchdog, .timeout = 20)
{
	script *sc = new_script();
	sc->what[1][0] = RUN_HANG;
	int dev = 0;
	supervisor_options o = options(sc, &dev, 1, 3);
	o.watchdog_ms = 300;
	supervisor_report r;
	at_error err = { { 0 } };
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	cr_assert_eq(supervise(&o, &r, &err), 0, "%s", err.msg);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double s = (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	cr_assert_lt(s, 10.0, "the hang was not cut short (%.1f s)", s);
	cr_assert_eq(r.shapes[1].state, SHAPE_TUNED);
	cr_assert(strstr(r.shapes[1].summary.winner_params, "0:no progress on the GPU for 0.3 s"),
		  "%s", r.shapes[1].summary.winner_params);
	cr_assert_eq(r.restarts, 1);
	supervisor_report_free(&r);
	free(sc);
}

Test(supervisor, a_crash_outside_gpu_work_retries_the_shape_without_exclusions)
{
	script *sc = new_script();
	sc->what[1][2] = RUN_CRASH_ON_CPU_ONCE;
	int dev = 0;
	supervisor_options o = options(sc, &dev, 1, 3);
	supervisor_report r;
	at_error err = { { 0 } };
	cr_assert_eq(supervise(&o, &r, &err), 0, "%s", err.msg);
	cr_assert_eq(r.shapes[1].state, SHAPE_TUNED);
	cr_assert_eq(r.shapes[1].deaths, 1);
	cr_assert_eq(r.shapes[1].summary.passed, VARIANTS);
	cr_assert_str_empty(r.shapes[1].summary.winner_params);
	unlink(sc->marker);
	supervisor_report_free(&r);
	free(sc);
}

Test(supervisor, a_shape_that_keeps_killing_workers_is_abandoned)
{
	script *sc = new_script();
	for (int v = 0; v < VARIANTS; v++)
		sc->what[1][v] = RUN_CRASH;
	int dev = 0;
	supervisor_options o = options(sc, &dev, 1, 3);
	o.max_deaths = 2;
	supervisor_report r;
	at_error err = { { 0 } };
	cr_assert_eq(supervise(&o, &r, &err), 0, "%s", err.msg);
	cr_assert_eq(r.shapes[1].state, SHAPE_ABANDONED);
	cr_assert_eq(r.shapes[1].deaths, 3);
	cr_assert(strstr(r.shapes[1].reason, "abandoned after 3 worker deaths"), "%s",
		  r.shapes[1].reason);
	cr_assert_eq(r.abandoned, 1);
	cr_assert_eq(r.shapes[0].state, SHAPE_TUNED);
	cr_assert_eq(r.shapes[2].state, SHAPE_TUNED);
	supervisor_report_free(&r);
	free(sc);
}

Test(supervisor, several_workers_share_the_shapes)
{
	script *sc = new_script();
	sc->sleep_ms = 20;
	sc->what[7][0] = RUN_CRASH;
	int devs[] = { 0, 1, 2 };
	supervisor_options o = options(sc, devs, 3, 30);
	supervisor_report r;
	at_error err = { { 0 } };
	cr_assert_eq(supervise(&o, &r, &err), 0, "%s", err.msg);
	int per_device[3] = { 0 };
	for (size_t i = 0; i < 30; i++) {
		cr_assert_eq(r.shapes[i].state, SHAPE_TUNED, "shape %zu", i);
		per_device[(int)r.shapes[i].summary.time_us]++;
	}
	for (int d = 0; d < 3; d++) {
		cr_assert_gt(per_device[d], 3, "device %d tuned only %d shapes", d, per_device[d]);
		cr_assert_eq(r.slots[d].sweep_id, 100 + d);
		cr_assert_float_eq(r.slots[d].copy_gbps, 3000 + d, 1e-9);
	}
	cr_assert_eq(r.stats.compiled, 30);
	cr_assert_eq(r.restarts, 1);
	cr_assert(strncmp(r.shapes[7].summary.winner_params, "0:", 2) == 0);
	supervisor_report_free(&r);
	free(sc);
}

Test(supervisor, a_worker_that_cannot_start_ends_the_sweep_with_its_reason)
{
	script *sc = new_script();
	sc->fatal_at_start_device = 7;
	int dev = 7;
	supervisor_options o = options(sc, &dev, 1, 4);
	supervisor_report r;
	at_error err = { { 0 } };
	cr_assert_eq(supervise(&o, &r, &err), -1);
	cr_assert_str_eq(err.msg, "no GPU 7 on this machine");
	for (size_t i = 0; i < 4; i++)
		cr_assert_eq(r.shapes[i].state, SHAPE_PENDING);
	supervisor_report_free(&r);
	free(sc);
}

Test(supervisor, a_fatal_error_stops_handing_out_shapes)
{
	script *sc = new_script();
	sc->fatal_on_shape = 2;
	int dev = 0;
	supervisor_options o = options(sc, &dev, 1, 6);
	supervisor_report r;
	at_error err = { { 0 } };
	cr_assert_eq(supervise(&o, &r, &err), -1);
	cr_assert_str_eq(err.msg, "database is locked (shape 2)");
	cr_assert_eq(r.shapes[1].state, SHAPE_TUNED);
	cr_assert_eq(r.shapes[2].state, SHAPE_PENDING);
	cr_assert_eq(r.shapes[5].state, SHAPE_PENDING);
	cr_assert_eq(r.restarts, 0);
	supervisor_report_free(&r);
	free(sc);
}

/* Ctrl-C: no more shapes, the busy worker asked to stop (it keeps what it
 * compiled) and not counted as dead, the report says which signal. */
Test(supervisor, ctrl_c_stops_the_workers_and_reports_the_signal, .timeout = 30)
{
	script *sc = new_script();
	sc->interrupt_on_shape = 3;
	int dev = 0;
	supervisor_options o = options(sc, &dev, 1, 8);
	supervisor_report r;
	at_error err = { { 0 } };
	cr_assert_eq(supervise(&o, &r, &err), -1);
	cr_assert_str_eq(err.msg, "interrupted");
	cr_assert_eq(r.interrupted, SIGINT);
	for (size_t i = 0; i < 3; i++)
		cr_assert_eq(r.shapes[i].state, SHAPE_TUNED, "shape %zu", i);
	for (size_t i = 3; i < 8; i++)
		cr_assert_eq(r.shapes[i].state, SHAPE_PENDING, "shape %zu", i);
	cr_assert_eq(r.shapes[3].deaths, 0);
	cr_assert_eq(r.restarts, 0);
	cr_assert_eq(r.abandoned, 0);
	cr_assert_eq(access(sc->stored, F_OK), 0, "the worker was not let finish");
	/* and the handler is gone with supervise */
	struct sigaction sa;
	sigaction(SIGINT, NULL, &sa);
	cr_assert(sa.sa_handler == SIG_DFL);
	supervisor_report_free(&r);
	unlink(sc->stored);
	free(sc);
}

/* A worker that does not stop when asked is killed after the grace time. */
Test(supervisor, a_worker_that_ignores_the_stop_is_killed_after_the_grace_time, .timeout = 30)
{
	script *sc = new_script();
	sc->interrupt_on_shape = 1;
	sc->ignore_term = 1;
	int dev = 0;
	supervisor_options o = options(sc, &dev, 1, 4);
	o.grace_ms = 300;
	supervisor_report r;
	at_error err = { { 0 } };
	time_t start = time(NULL);
	cr_assert_eq(supervise(&o, &r, &err), -1);
	cr_assert_lt(time(NULL) - start, 8, "not killed after the grace time");
	cr_assert_eq(r.interrupted, SIGINT);
	cr_assert_eq(r.shapes[0].state, SHAPE_TUNED);
	cr_assert_eq(r.shapes[1].state, SHAPE_PENDING);
	cr_assert_eq(r.restarts, 0);
	cr_assert_neq(access(sc->stored, F_OK), 0);
	supervisor_report_free(&r);
	free(sc);
}
