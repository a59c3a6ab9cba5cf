/* Sweep progress on stderr: a bar redrawn in place on a terminal, plain
 * lines otherwise (logs, CI). */
#ifndef AT_TUNER_PROGRESS_H
#define AT_TUNER_PROGRESS_H

#include <stddef.h>

typedef struct progress {
	int tty;
	size_t total, done;
	char label[128];
} progress;

void progress_init(progress *p, size_t total);

/* Sets the shape being worked on (label) and redraws. */
void progress_begin_shape(progress *p, const char *label);

/* Within a shape: `step` of `steps` variants done (terminal only). */
void progress_step(progress *p, size_t step, size_t steps);

/* Ends the current shape with a one-line outcome. */
void progress_end_shape(progress *p, const char *outcome);

/* Clears the bar. */
void progress_finish(progress *p);

#endif
