/* Progress display: see progress.h. */
#include "tuner/sweep/progress.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define BAR_WIDTH 30

void progress_init(progress *p, size_t total)
{
	memset(p, 0, sizeof *p);
	p->tty = isatty(STDERR_FILENO);
	p->total = total;
}

static void draw_bar(const progress *p, double frac)
{
	int filled = (int)(frac * BAR_WIDTH);
	if (filled < 0)
		filled = 0;
	char bar[BAR_WIDTH + 1];
	for (int i = 0; i < BAR_WIDTH; i++)
		bar[i] = i < filled ? '#' : '.';
	bar[BAR_WIDTH] = '\0';
	fprintf(stderr, "\r\033[K[%s] %zu/%zu %s", bar, p->done, p->total, p->label);
}

static void draw(const progress *p, size_t step, size_t steps)
{
	draw_bar(p, p->total ? (p->done + (steps ? (double)step / steps : 0)) / p->total : 1);
	if (steps)
		fprintf(stderr, " (%zu/%zu)", step, steps);
	fflush(stderr);
}

void progress_status(progress *p, double frac, const char *text)
{
	if (!p->tty)
		return;
	draw_bar(p, frac);
	fprintf(stderr, "%s%s", *p->label ? ": " : "", text);
	fflush(stderr);
}

void progress_duration(double seconds, char *buf, size_t cap)
{
	long s = seconds < 0 ? 0 : (long)(seconds + 0.5);
	if (s < 60)
		snprintf(buf, cap, "%lds", s);
	else if (s < 3600)
		snprintf(buf, cap, "%ldm%02lds", s / 60, s % 60);
	else
		snprintf(buf, cap, "%ldh%02ldm", s / 3600, s % 3600 / 60);
}

double progress_compile_eta_s(size_t compiled, size_t running, size_t to_compile,
			      double compiling_s)
{
	if (compiled >= to_compile)
		return 0;
	if (compiled == 0 || compiled < running)
		return -1;
	return compiling_s * (double)(to_compile - compiled) / (double)compiled;
}

void progress_kernels_text(size_t compiled, size_t running, size_t to_compile,
			   double compiling_s, char *buf, size_t cap)
{
	char eta[32] = "?";
	double left = progress_compile_eta_s(compiled, running, to_compile, compiling_s);
	if (left >= 0)
		progress_duration(left, eta, sizeof eta);
	snprintf(buf, cap, "%zu/%zu kernels compiled, ETA %s", compiled, to_compile, eta);
}

void progress_begin_shape(progress *p, const char *label)
{
	snprintf(p->label, sizeof p->label, "%s", label);
	if (p->tty)
		draw(p, 0, 0);
}

void progress_step(progress *p, size_t step, size_t steps)
{
	if (p->tty)
		draw(p, step, steps);
}

void progress_end_shape(progress *p, const char *outcome)
{
	p->done++;
	if (p->tty)
		fprintf(stderr, "\r\033[K");
	fprintf(stderr, "[%zu/%zu] %s: %s\n", p->done, p->total, p->label, outcome);
	if (p->tty)
		draw(p, 0, 0);
}

void progress_finish(progress *p)
{
	if (p->tty)
		fprintf(stderr, "\r\033[K");
	fflush(stderr);
}
