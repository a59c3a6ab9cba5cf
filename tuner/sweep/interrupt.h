/* Ctrl-C during a sweep. The first SIGINT (or SIGTERM, as a batch system
 * sends before it kills) is caught rather than ending the process: the
 * sweep stops taking new work, stores the kernels compiled so far in the
 * database's compile cache, says how far it got and exits 128 + the signal
 * (130 for Ctrl-C), so that running the same command again resumes without
 * compiling them again. The handler only sets a flag that the sweep polls
 * (kernel_cache.h's and tune_shape.h's interrupted, the supervisor's
 * loop). A second signal of the same kind ends the process at once (the
 * default action). */
#ifndef AT_TUNER_INTERRUPT_H
#define AT_TUNER_INTERRUPT_H

/* Catches SIGINT and SIGTERM until interrupt_release, and forgets any
 * signal caught before. A signal ignored when this is called stays ignored
 * (a sweep started in the background of a script, or under nohup). */
void interrupt_catch(void);

/* Puts back what interrupt_catch found; a signal caught stays caught. */
void interrupt_release(void);

/* The signal caught since interrupt_catch, or 0. Safe in any thread. */
int interrupt_caught(void);

/* The exit status for being interrupted by sig: 128 + sig. */
int interrupt_status(int sig);

#endif
