/* SPDX-License-Identifier: MIT */
/*
 * NVTX ranges as a program annotates with the header-only NVTX v3: push/pop
 * and start/end, default and named domains, ASCII, wide and registered
 * names; start/end ranges overlapping and ended on another thread. Blocks
 * of distinct sizes mark where records must land (tests/test-steps.c).
 */
#include <nvtx3/nvToolsExt.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static sem_t go, done;
static nvtxRangeId_t to_end;
static void *blocks[16];

/* Allocates while main's backward range is open, then ends main's optimizer range. */
static void *helper(void *arg)
{
	(void)arg;
	sem_wait(&go);
	blocks[3] = malloc(2003); /* gradient */
	sem_post(&done);
	sem_wait(&go);
	nvtxRangeEnd(to_end);
	sem_post(&done);
	return NULL;
}

static nvtxEventAttributes_t attrs(void)
{
	nvtxEventAttributes_t a;
	memset(&a, 0, sizeof(a));
	a.version = NVTX_VERSION;
	a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
	return a;
}

int main(void)
{
	pthread_t t;
	sem_init(&go, 0, 0);
	sem_init(&done, 0, 0);
	if (pthread_create(&t, NULL, helper, NULL))
		return 3;
	/* A range open across many others keeps its end. */
	nvtxRangeId_t epoch = nvtxRangeStartA("epoch");
	for (int i = 0; i < 5000; i++)
		nvtxRangeEnd(nvtxRangeStartA("tick"));
	printf("push %d\n", nvtxRangePushA("model.forward"));
	blocks[1] = malloc(2001); /* activation, forward */
	nvtxRangePushW(L"lin\u00e9aire");
	blocks[2] = malloc(2002); /* activation, linéaire */
	nvtxRangePop();
	nvtxRangePop();

	nvtxRangeId_t b = nvtxRangeStartA("loss.backward");
	sem_post(&go);
	sem_wait(&done);
	nvtxEventAttributes_t a = attrs();
	a.messageType = NVTX_MESSAGE_TYPE_ASCII;
	a.message.ascii = "optimizer";
	to_end = nvtxRangeStartEx(&a);
	/* Overlapping: backward ends first, inside optimizer. */
	nvtxRangeEnd(b);
	blocks[4] = malloc(2004); /* optimizer */
	sem_post(&go);
	sem_wait(&done);
	blocks[5] = malloc(2005); /* other */

	nvtxDomainHandle_t d = nvtxDomainCreateA("mydomain");
	a = attrs();
	a.messageType = NVTX_MESSAGE_TYPE_UNICODE;
	a.message.unicode = L"Optimizer.step#SGD.step";
	nvtxDomainRangePushEx(d, &a);
	blocks[6] = malloc(2006); /* optimizer */
	nvtxDomainRangePop(d);
	a = attrs();
	a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
	a.message.registered = nvtxDomainRegisterStringA(d, "registered");
	nvtxRangeId_t r = nvtxDomainRangeStartEx(d, &a);
	blocks[7] = malloc(2007); /* other */
	nvtxDomainRangeEnd(d, r);
	nvtxRangeEnd(epoch);
	pthread_join(t, NULL);
	for (int i = 0; i < 16; i++)
		free(blocks[i]);
	printf("done 0\n");
	return 0;
}
