/* A sweep's phase timing switch and clock: see phases.h. */
#include "tuner/sweep/phases.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

int phases_wanted(void)
{
	const char *env = getenv("AUTOTUNE_PHASES");
	return env && strcmp(env, "1") == 0;
}

double phases_now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}
