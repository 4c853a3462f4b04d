/* SPDX-License-Identifier: MIT */
/* A second thread's allocations: 6161 bytes from t_site in the thread, 6262 from m_site in main. */
#include <pthread.h>
#include <stdlib.h>

#define FRAME __attribute__((noinline))
#define KEEP(p) __asm__ volatile("" : : "r"(p) : "memory")

FRAME void *t_site(size_t n)
{
	void *p = malloc(n);
	KEEP(p);
	return p;
}

FRAME void *m_site(size_t n)
{
	void *p = malloc(n);
	KEEP(p);
	return p;
}

FRAME static void *thread_main(void *arg)
{
	(void)arg;
	free(t_site(6161));
	return NULL;
}

int main(void)
{
	pthread_t t;
	if (pthread_create(&t, NULL, thread_main, NULL) != 0)
		return 1;
	free(m_site(6262));
	pthread_join(t, NULL);
	return 0;
}
