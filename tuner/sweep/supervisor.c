/* The sweep's process supervisor: see supervisor.h. */
#include "tuner/sweep/supervisor.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/strbuf.h"
#include "tuner/sweep/interrupt.h"
#include "tuner/sweep/progress.h"

typedef enum slot_state { SLOT_STARTING, SLOT_IDLE, SLOT_BUSY, SLOT_QUITTING, SLOT_GONE } slot_state;

/* A variant that a shape's next worker must not run. */
typedef struct exclusion {
	int shape, variant, slot;
	char reason[512];
} exclusion;

typedef struct slot {
	worker_start start;
	slot_state state;
	pid_t pid;
	int to_worker, from_worker;
	int shape;            /* BUSY: the shape it tunes */
	int retry_shape;      /* a shape to give this slot's next worker first; -1 none */
	int armed;            /* on the GPU: the watchdog runs */
	double deadline_ms;
	int variant;          /* the last variant announced */
	char variant_label[256];
	char lost[512];       /* CONTEXT_LOST or FATAL text */
	int fatal;
	int watchdog_fired;
	int ever_ready;
} slot;

typedef struct supervisor {
	const supervisor_options *o;
	supervisor_report *r;
	slot *slots;
	size_t next_shape;    /* the queue: shapes next_shape.. not yet handed out */
	exclusion *excl;
	size_t nexcl, excl_cap;
	int stopping;         /* a fatal error or Ctrl-C: hand out nothing more */
	int interrupted;      /* the signal caught, or 0 */
	double grace_end_ms;  /* interrupted: workers left then are killed */
	char fatal[1024];
	progress prog;
} supervisor;

static double now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static const char *shape_label(const supervisor *s, int shape)
{
	return s->o->labels ? s->o->labels[shape] : "shape";
}

static void note(const supervisor *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(const supervisor *s, const char *fmt, ...)
{
	if (s->o->quiet)
		return;
	if (s->prog.tty)
		fprintf(stderr, "\r\033[K");
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "autotune: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
}

static int start_worker(supervisor *s, slot *w)
{
	int down[2], up[2];
	if (pipe(down))
		return -1;
	if (pipe(up)) {
		close(down[0]);
		close(down[1]);
		return -1;
	}
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		close(down[0]);
		close(down[1]);
		close(up[0]);
		close(up[1]);
		return -1;
	}
	if (pid == 0) {
		/* the child: keep only its own two ends */
		signal(SIGPIPE, SIG_IGN);
		for (int i = 0; i < s->o->ndevices; i++) {
			if (s->slots[i].state != SLOT_GONE && &s->slots[i] != w) {
				close(s->slots[i].to_worker);
				close(s->slots[i].from_worker);
			}
		}
		close(down[1]);
		close(up[0]);
		int rc = s->o->worker_main(s->o->worker_arg, &w->start, down[0], up[1]);
		fflush(NULL);
		_exit(rc);
	}
	close(down[0]);
	close(up[1]);
	w->pid = pid;
	w->to_worker = down[1];
	w->from_worker = up[0];
	w->state = SLOT_STARTING;
	w->armed = w->fatal = w->watchdog_fired = 0;
	w->variant = -1;
	w->variant_label[0] = w->lost[0] = '\0';
	return 0;
}

static void add_exclusion(supervisor *s, int shape, int variant_index, int slot_index,
			  const char *reason)
{
	if (s->nexcl == s->excl_cap) {
		s->excl_cap = s->excl_cap ? 2 * s->excl_cap : 8;
		s->excl = xrealloc(s->excl, s->excl_cap * sizeof *s->excl);
	}
	exclusion *e = &s->excl[s->nexcl++];
	e->shape = shape;
	e->variant = variant_index;
	e->slot = slot_index;
	snprintf(e->reason, sizeof e->reason, "%s", reason);
}

static int send_shape(supervisor *s, slot *w, int shape)
{
	int slot_index = (int)(w - s->slots);
	for (size_t i = 0; i < s->nexcl; i++) {
		const exclusion *e = &s->excl[i];
		if (e->shape != shape || e->slot != slot_index)
			continue;
		worker_msg m = worker_msg_make(WMSG_EXCLUDE);
		m.shape = shape;
		m.variant = e->variant;
		snprintf(m.text, sizeof m.text, "%s", e->reason);
		if (worker_msg_write(w->to_worker, &m))
			return -1;
	}
	worker_msg m = worker_msg_make(WMSG_TUNE);
	m.shape = shape;
	if (worker_msg_write(w->to_worker, &m))
		return -1;
	w->state = SLOT_BUSY;
	w->shape = shape;
	w->armed = 0;
	if (!s->o->quiet)
		progress_begin_shape(&s->prog, shape_label(s, shape));
	return 0;
}

/* Gives an idle worker its next shape, or tells it to quit. */
static void assign(supervisor *s, slot *w)
{
	int shape = -1;
	if (!s->stopping) {
		if (w->retry_shape >= 0) {
			shape = w->retry_shape;
			w->retry_shape = -1;
		} else if (s->next_shape < s->o->nshapes) {
			shape = (int)s->next_shape++;
		}
	}
	if (shape >= 0 && send_shape(s, w, shape) == 0)
		return;
	if (shape >= 0) {
		/* the pipe broke: its death will be seen on the other pipe */
		w->retry_shape = shape;
		return;
	}
	worker_msg m = worker_msg_make(WMSG_QUIT);
	worker_msg_write(w->to_worker, &m);
	w->state = SLOT_QUITTING;
}

static void abandon(supervisor *s, int shape, const char *why)
{
	shape_outcome *out = &s->r->shapes[shape];
	out->state = SHAPE_ABANDONED;
	snprintf(out->reason, sizeof out->reason, "%s", why);
	s->r->abandoned++;
	if (!s->o->quiet)
		progress_end_shape(&s->prog, out->reason);
}

static void describe_exit(int status, char *buf, size_t cap)
{
	if (WIFSIGNALED(status))
		snprintf(buf, cap, "the worker process died of signal %d (%s)", WTERMSIG(status),
			 strsignal(WTERMSIG(status)));
	else
		snprintf(buf, cap, "the worker process exited with status %d", WEXITSTATUS(status));
}

/* The slot will not run again: a shape kept for its next worker (with that
 * worker's exclusions) cannot be tuned. */
static void give_up_slot(supervisor *s, slot *w, const char *why)
{
	w->state = SLOT_GONE;
	if (w->retry_shape >= 0 && !s->stopping)
		abandon(s, w->retry_shape, why);
	w->retry_shape = -1;
}

/* Whether any shape is still waiting for a worker of this slot. */
static int work_left(const supervisor *s, const slot *w)
{
	return !s->stopping && (w->retry_shape >= 0 || s->next_shape < s->o->nshapes);
}

/* The worker's pipe closed: reap it, charge the variant it was running, and
 * restart it if there is work left. */
static void handle_exit(supervisor *s, slot *w)
{
	int status = 0;
	while (waitpid(w->pid, &status, 0) < 0 && errno == EINTR)
		;
	close(w->to_worker);
	close(w->from_worker);
	int slot_index = (int)(w - s->slots);
	slot_state was = w->state;
	w->state = SLOT_GONE;
	if (was == SLOT_QUITTING && WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return;
	if (s->interrupted)
		return; /* it was told to stop: its shape is left pending, nothing to blame */
	char how[256];
	describe_exit(status, how, sizeof how);
	if (w->fatal && was == SLOT_STARTING && w->ever_ready) {
		/* a restarted worker that cannot open its GPU again: lose the slot */
		note(s, "GPU %d: the restarted worker failed: %s", w->start.device, w->lost);
		give_up_slot(s, w, w->lost);
		return;
	}
	if (w->fatal) {
		/* it said why and must not be restarted (a database error, no GPU) */
		if (!s->stopping)
			snprintf(s->fatal, sizeof s->fatal, "%s", w->lost);
		s->stopping = 1;
		if (was == SLOT_BUSY)
			w->retry_shape = w->shape; /* left pending */
		return;
	}
	if (was == SLOT_STARTING || was == SLOT_QUITTING) {
		note(s, "GPU %d: %s %s", w->start.device, how,
		     was == SLOT_STARTING ? "while starting" : "while finishing");
		if (was == SLOT_STARTING && !w->ever_ready && !s->fatal[0])
			snprintf(s->fatal, sizeof s->fatal, "the worker for GPU %d did not start: %s",
				 w->start.device, how);
		if (was == SLOT_STARTING)
			give_up_slot(s, w, "its worker process could not be restarted");
		return;
	}
	if (was != SLOT_BUSY)
		return;
	/* died during a shape */
	shape_outcome *out = &s->r->shapes[w->shape];
	out->deaths++;
	char reason[512];
	if (w->lost[0])
		snprintf(reason, sizeof reason, "%s", w->lost);
	else if (w->watchdog_fired)
		snprintf(reason, sizeof reason, "no progress on the GPU for %.1f s: killed by the "
			 "watchdog (the variant hangs)", s->o->watchdog_ms / 1e3);
	else
		snprintf(reason, sizeof reason, "%s while running it", how);
	if (w->armed || w->lost[0]) {
		add_exclusion(s, w->shape, w->variant, slot_index, reason);
		note(s, "GPU %d, %s: %s %s: %s; restarting the worker", w->start.device,
		     shape_label(s, w->shape), w->variant < 0 ? "baselines" : "variant",
		     w->variant_label[0] ? w->variant_label : "", reason);
	} else {
		note(s, "GPU %d, %s: %s outside GPU work; restarting the worker", w->start.device,
		     shape_label(s, w->shape), how);
	}
	s->r->restarts++;
	if (out->deaths > s->o->max_deaths) {
		char why[1024];
		snprintf(why, sizeof why, "abandoned after %d worker deaths (last: %s)", out->deaths,
			 reason);
		abandon(s, w->shape, why);
	} else {
		w->retry_shape = w->shape;
	}
	if (!work_left(s, w))
		return;
	if (start_worker(s, w)) {
		note(s, "GPU %d: could not restart the worker: %s", w->start.device, strerror(errno));
		give_up_slot(s, w, "could not restart the worker process");
	}
}

static void add_stats(worker_stats *to, const worker_stats *d)
{
	to->compiled += d->compiled;
	to->from_db += d->from_db;
	to->compile_ms += d->compile_ms;
	to->bench_ms += d->bench_ms;
}

static void handle_msg(supervisor *s, slot *w, const worker_msg *m)
{
	switch (m->type) {
	case WMSG_READY:
		w->state = SLOT_IDLE;
		w->ever_ready = 1;
		w->start.sweep_id = m->sweep_id;
		w->start.copy_gbps = m->copy_gbps;
		s->r->slots[w - s->slots].sweep_id = m->sweep_id;
		s->r->slots[w - s->slots].copy_gbps = m->copy_gbps;
		break;
	case WMSG_GPU:
		w->armed = 1;
		w->deadline_ms = now_ms() + s->o->watchdog_ms;
		if (m->variant != w->variant || !w->variant_label[0])
			snprintf(w->variant_label, sizeof w->variant_label, "%.250s", m->text);
		w->variant = m->variant;
		break;
	case WMSG_CPU:
		w->armed = 0;
		break;
	case WMSG_STEP:
		if (!s->o->quiet)
			progress_step(&s->prog, m->step, m->steps);
		break;
	case WMSG_SHAPE_DONE: {
		if (w->state != SLOT_BUSY || m->shape != w->shape)
			break;
		shape_outcome *out = &s->r->shapes[w->shape];
		out->state = SHAPE_TUNED;
		out->earlier = m->earlier;
		out->summary = m->summary;
		add_stats(&s->r->slots[w - s->slots].stats, &m->stats);
		add_stats(&s->r->stats, &m->stats);
		w->state = SLOT_IDLE;
		w->armed = 0;
		if (!s->o->quiet)
			progress_end_shape(&s->prog, m->text);
		break;
	}
	case WMSG_CONTEXT_LOST:
		snprintf(w->lost, sizeof w->lost, "%.500s", m->text);
		w->variant = m->variant;
		break;
	case WMSG_FATAL:
		snprintf(w->lost, sizeof w->lost, "%.500s", m->text);
		w->fatal = 1;
		break;
	default:
		break;
	}
}

/* At most this long in poll: a Ctrl-C caught just before poll began would
 * otherwise wait for the next message. */
#define POLL_CAP_MS 200

static int poll_timeout(const supervisor *s)
{
	double soonest = POLL_CAP_MS, now = now_ms();
	for (int i = 0; i < s->o->ndevices; i++) {
		const slot *w = &s->slots[i];
		if (w->state == SLOT_GONE || !w->armed || s->o->watchdog_ms <= 0)
			continue;
		double left = w->deadline_ms - now;
		if (left < soonest)
			soonest = left;
	}
	return soonest < 0 ? 0 : (int)soonest + 1;
}

/* The first time a Ctrl-C is seen: stop handing out shapes and ask every
 * worker to stop; once the grace time is over, kill those left. */
static void check_interrupt(supervisor *s)
{
	int n = s->o->ndevices;
	if (!s->interrupted && interrupt_caught()) {
		s->interrupted = s->r->interrupted = interrupt_caught();
		s->stopping = 1;
		s->grace_end_ms = now_ms() + (s->o->grace_ms > 0 ? s->o->grace_ms : SUPERVISOR_GRACE_MS);
		note(s, "interrupted: the workers store the kernels they compiled, then stop "
		     "(Ctrl-C again to stop at once)");
		for (int i = 0; i < n; i++)
			if (s->slots[i].state != SLOT_GONE)
				kill(s->slots[i].pid, SIGTERM);
	} else if (s->interrupted && now_ms() > s->grace_end_ms) {
		for (int i = 0; i < n; i++)
			if (s->slots[i].state != SLOT_GONE)
				kill(s->slots[i].pid, SIGKILL);
	}
}

static void check_watchdogs(supervisor *s)
{
	double now = now_ms();
	for (int i = 0; i < s->o->ndevices; i++) {
		slot *w = &s->slots[i];
		if (w->state == SLOT_GONE || !w->armed || s->o->watchdog_ms <= 0 ||
		    w->watchdog_fired || now < w->deadline_ms)
			continue;
		w->watchdog_fired = 1;
		kill(w->pid, SIGKILL);
	}
}

static int live_slots(const supervisor *s)
{
	int n = 0;
	for (int i = 0; i < s->o->ndevices; i++)
		n += s->slots[i].state != SLOT_GONE;
	return n;
}

static void loop(supervisor *s)
{
	int n = s->o->ndevices;
	struct pollfd *fds = xcalloc((size_t)n, sizeof *fds);
	while (live_slots(s)) {
		check_interrupt(s);
		for (int i = 0; i < n; i++)
			if (s->slots[i].state == SLOT_IDLE)
				assign(s, &s->slots[i]);
		for (int i = 0; i < n; i++) {
			fds[i].fd = s->slots[i].state == SLOT_GONE ? -1 : s->slots[i].from_worker;
			fds[i].events = POLLIN;
			fds[i].revents = 0;
		}
		int rc = poll(fds, (nfds_t)n, poll_timeout(s));
		if (rc < 0 && errno != EINTR)
			break;
		for (int i = 0; i < n && rc > 0; i++) {
			slot *w = &s->slots[i];
			if (w->state == SLOT_GONE || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			worker_msg m;
			if (worker_msg_read(w->from_worker, &m) == 0)
				handle_msg(s, w, &m);
			else
				handle_exit(s, w);
		}
		check_watchdogs(s);
	}
	free(fds);
}

int supervise(const supervisor_options *o, supervisor_report *r, at_error *err)
{
	memset(r, 0, sizeof *r);
	r->shapes = xcalloc(o->nshapes ? o->nshapes : 1, sizeof *r->shapes);
	r->slots = xcalloc((size_t)(o->ndevices > 0 ? o->ndevices : 1), sizeof *r->slots);
	r->nslots = o->ndevices > 0 ? o->ndevices : 0;
	for (int i = 0; i < o->ndevices; i++)
		r->slots[i].device = o->devices[i];
	if (o->ndevices < 1)
		return at_error_set(err, "no GPU to run the sweep on");
	supervisor s = { .o = o, .r = r };
	/* a worker that died leaves a pipe that would kill us on write */
	void (*old_sigpipe)(int) = signal(SIGPIPE, SIG_IGN);
	interrupt_catch(); /* the workers inherit it */
	s.slots = xcalloc((size_t)o->ndevices, sizeof *s.slots);
	if (!o->quiet)
		progress_init(&s.prog, o->nshapes);
	int started = 0;
	for (int i = 0; i < o->ndevices; i++) {
		slot *w = &s.slots[i];
		w->state = SLOT_GONE;
		w->retry_shape = -1;
		w->start = (worker_start){ .device = o->devices[i], .slot = i, .nworkers = o->ndevices,
					   .report_steps = !o->quiet && s.prog.tty };
		if (start_worker(&s, w) == 0)
			started++;
		else
			note(&s, "GPU %d: cannot start a worker: %s", o->devices[i], strerror(errno));
	}
	if (started)
		loop(&s);
	if (!o->quiet)
		progress_finish(&s.prog);
	/* shapes nobody could take: every worker is gone */
	size_t pending = 0;
	for (size_t i = 0; i < o->nshapes; i++)
		pending += r->shapes[i].state == SHAPE_PENDING;
	int rc = 0;
	if (s.interrupted)
		rc = at_error_set(err, "interrupted");
	else if (s.fatal[0] && (s.stopping || pending))
		rc = at_error_set(err, "%s", s.fatal);
	else if (pending)
		rc = at_error_set(err, "%zu shapes were not tuned: no worker is left to run them",
				  pending);
	free(s.slots);
	free(s.excl);
	interrupt_release();
	signal(SIGPIPE, old_sigpipe);
	return rc;
}

void supervisor_report_free(supervisor_report *r)
{
	free(r->shapes);
	free(r->slots);
	memset(r, 0, sizeof *r);
}
