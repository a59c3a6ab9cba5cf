/* Catching Ctrl-C: see interrupt.h. */
#include "tuner/sweep/interrupt.h"

#include <signal.h>
#include <stdatomic.h>
#include <string.h>

/* A lock-free atomic, which a signal handler may store to (C11 7.14.1.1)
 * and every thread sees. */
static atomic_int caught;

static const int signals[] = { SIGINT, SIGTERM };
#define NSIGNALS (int)(sizeof signals / sizeof signals[0])
static struct sigaction saved[NSIGNALS];
static int installed[NSIGNALS];

static void on_signal(int sig)
{
	int none = 0;
	atomic_compare_exchange_strong(&caught, &none, sig); /* the first one counts */
}

void interrupt_catch(void)
{
	atomic_store(&caught, 0);
	for (int i = 0; i < NSIGNALS; i++) {
		installed[i] = 0;
		if (sigaction(signals[i], NULL, &saved[i]) || saved[i].sa_handler == SIG_IGN)
			continue;
		struct sigaction sa;
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = on_signal;
		sigemptyset(&sa.sa_mask);
		/* no SA_RESTART: a blocking poll or read returns, to look at the flag;
		 * SA_RESETHAND: the second Ctrl-C is the default one */
		sa.sa_flags = SA_RESETHAND;
		installed[i] = sigaction(signals[i], &sa, NULL) == 0;
	}
}

void interrupt_release(void)
{
	for (int i = 0; i < NSIGNALS; i++)
		if (installed[i])
			sigaction(signals[i], &saved[i], NULL);
	memset(installed, 0, sizeof installed);
}

int interrupt_caught(void)
{
	return atomic_load(&caught);
}

int interrupt_status(int sig)
{
	return 128 + sig;
}
