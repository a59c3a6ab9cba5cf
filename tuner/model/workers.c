/* The threads of the model's evaluations: see workers.h. */
#include "tuner/model/workers.h"

#include <pthread.h>

void model_run_workers(void *(*fn)(void *), void *job, int threads)
{
	pthread_t tid[16];
	int nt = threads < 1 ? 1 : threads > 16 ? 16 : threads, started = 0;
	for (; started < nt - 1; started++)
		if (pthread_create(&tid[started], NULL, fn, job))
			break;
	fn(job);
	for (int i = 0; i < started; i++)
		pthread_join(tid[i], NULL);
}
