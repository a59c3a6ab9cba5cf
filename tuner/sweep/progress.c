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

static void draw(const progress *p, size_t step, size_t steps)
{
	double frac = p->total ? (p->done + (steps ? (double)step / steps : 0)) / p->total : 1;
	int filled = (int)(frac * BAR_WIDTH);
	char bar[BAR_WIDTH + 1];
	for (int i = 0; i < BAR_WIDTH; i++)
		bar[i] = i < filled ? '#' : '.';
	bar[BAR_WIDTH] = '\0';
	fprintf(stderr, "\r\033[K[%s] %zu/%zu %s", bar, p->done, p->total, p->label);
	if (steps)
		fprintf(stderr, " (%zu/%zu)", step, steps);
	fflush(stderr);
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
