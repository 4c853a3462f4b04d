/* SPDX-License-Identifier: MIT */
/*
 * The annotation API of include/cgprobe.h: step spans give allocations
 * their category, spans nest, belong to the thread that opened them, and
 * a free keeps the category of the block it ends. Declared weak, so the
 * program runs unchanged without the probe. C lines say where each record
 * must land; cgprobe_flush must make the records readable at once.
 */
#define PROG "spans"
#define CGPROBE_OPTIONAL
#include <cgprobe.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>

#include "prog.h"

static uint64_t begin(const char *name, enum cgprobe_step step)
{
	uint64_t id = cgprobe_span_begin(name, step);
	say("S span %s %llu", name, (unsigned long long)id);
	return id;
}

static void end(uint64_t id)
{
	int r = cgprobe_span_end(id);
	if (r)
		say("R end %llu failed %d", (unsigned long long)id, r);
}

static void *alloc_in(const char *op, size_t n, uint64_t span, const char *category)
{
	void *p = got(op, malloc(n), n);
	where(p, "alloc", span, category);
	return p;
}

static void free_in(void *p, size_t n, uint64_t span, const char *category)
{
	where(p, "free", span, category);
	gone("free", p, n);
	free(p);
}

/* A thread starts outside every span; a step open on another thread applies to it too. */
static void *worker(void *arg)
{
	(void)arg;
	void *p = alloc_in("malloc", 106, 1, "activation");
	uint64_t w = begin("worker", CGPROBE_STEP_OPTIMIZER);
	void *q = alloc_in("malloc", 107, w, "optimizer");
	free_in(p, 106, w, "activation");
	end(w);
	free_in(q, 107, 1, "optimizer");
	return NULL;
}

/* Counts the records for blocks of `bytes` bytes already in the trace file. */
static int count_in_trace(size_t bytes)
{
	static char data[1 << 20];
	char path[4096], needle[64];
	const char *tmpl = getenv("CGPROBE_OUTPUT");
	size_t at = 0, len = 0;
	if (!tmpl)
		return -1;
	for (const char *t = tmpl; *t && at + 16 < sizeof(path); t++) {
		if (t[0] == '%' && t[1] == 'p') {
			at += (size_t)snprintf(path + at, sizeof(path) - at, "%d", (int)getpid());
			t++;
		} else {
			path[at++] = *t;
		}
	}
	path[at] = '\0';
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	for (ssize_t n; len < sizeof(data) - 1; len += (size_t)n)
		if ((n = read(fd, data + len, sizeof(data) - 1 - len)) <= 0)
			break;
	close(fd);
	data[len] = '\0';
	snprintf(needle, sizeof(needle), "\"bytes\":%zu,", bytes);
	int count = 0;
	for (char *p = data; (p = strstr(p, needle)); p++)
		count++;
	return count;
}

int main(void)
{
	pthread_t t;
	if (!cgprobe_span_begin) {
		say("R no probe");
		return 0;
	}

	uint64_t f = begin("forward", CGPROBE_STEP_FORWARD);
	void *p1 = alloc_in("malloc", 101, f, "activation");
	/* A span without a step inherits the category of the step around it. */
	uint64_t inner = begin("inner", CGPROBE_STEP_NONE);
	void *p2 = alloc_in("malloc", 102, inner, "activation");
	say("R end-wrong-id %d", cgprobe_span_end(f));
	/* The worker thread runs while forward is open here. */
	if (pthread_create(&t, NULL, worker, NULL))
		return 3;
	pthread_join(t, NULL);
	end(inner);
	end(f);

	uint64_t b = begin("backward", CGPROBE_STEP_BACKWARD);
	void *p3 = alloc_in("malloc", 103, b, "gradient");
	/* A free carries the category of its block and the span it happens in. */
	free_in(p1, 101, b, "activation");
	end(b);

	uint64_t o = begin("optimizer", CGPROBE_STEP_OPTIMIZER);
	void *p4 = alloc_in("malloc", 104, o, "optimizer");
	free_in(p2, 102, o, "activation");
	end(o);

	void *p5 = alloc_in("malloc", 105, 1, "other");
	free_in(p3, 103, 1, "gradient");
	free_in(p4, 104, 1, "optimizer");
	say("R end-none-open %d", cgprobe_span_end(o));
	say("R bad-step %llu", (unsigned long long)cgprobe_span_begin("bad", (enum cgprobe_step)7));

	void *marker[3];
	for (int i = 0; i < 3; i++)
		marker[i] = alloc_in("malloc", 777, 1, "other");
	say("R flush %d", cgprobe_flush());
	say("R flushed %d", count_in_trace(777));
	for (int i = 0; i < 3; i++)
		free_in(marker[i], 777, 1, "other");
	free_in(p5, 105, 1, "other");

	/* Left open at exit: the root span is closed all the same. */
	begin("left-open", CGPROBE_STEP_NONE);
	return 0;
}
