/* Sweep progress on stderr: a bar redrawn in place on a terminal, plain
 * lines otherwise (logs, CI). Used by the sweep on the GPU (shape by shape)
 * and by sweep --compile-only (shapes whose kernels are ready, kernels
 * compiled, the time left). */
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

/* On a terminal: the bar at frac (0 to 1), "done/total label" and text;
 * nothing otherwise. */
void progress_status(progress *p, double frac, const char *text);

/* A duration for people: "45s", "3m05s", "2h07m". */
void progress_duration(double seconds, char *buf, size_t cap);

/* The time left to compile to_compile programs: the rate so far (those
 * compiled over compiling_s, the time since the first began compiling, not
 * since the program started: loading the plan and queueing every shape's
 * kernels come first) times those left. Unknown (< 0) until as many have
 * been compiled as are being compiled (a round of the threads): the first
 * to finish said little (with 16 threads, the first kernel done made the
 * ETA about 16 times too long). */
double progress_compile_eta_s(size_t compiled, size_t running, size_t to_compile,
			      double compiling_s);

/* "1234/2694 kernels compiled, ETA 2m05s": of the programs to compile in
 * this run, those done and the time left (progress_compile_eta_s; "ETA ?"
 * while unknown). */
void progress_kernels_text(size_t compiled, size_t running, size_t to_compile,
			   double compiling_s, char *buf, size_t cap);

#endif
