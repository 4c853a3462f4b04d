/* SPDX-License-Identifier: MIT */
/*
 * A job of many processes read as one (docs/jobs.md): the traces of a
 * folder, each process's identity and rank, the process tree, one time
 * axis, the machines' totals and the physical GPUs' exact sums, with a
 * fork child's inherited blocks counted once; several reading threads
 * agree with one.
 */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgtrace.h"
#include "test-gen.h"
#include "test-main.h"

static char dir[64];

static void make_dir(void)
{
	strcpy(dir, "/tmp/cgjob.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void remove_dir(void)
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}

/* A process's trace head: tags is the inside of "tags":{...}. */
static void head(struct text *t, const char *tags)
{
	put(t, "{\"kind\":\"meta\",\"schema\":\"candle-graph/trace/6\",\"run_id\":\"r\","
	       "\"correlation_id\":\"c\",\"entrypoint\":\"e\",\"phase\":\"train\","
	       "\"timestamp\":\"2026-08-04T18:00:00.250Z\",\"capture_step\":1,\"warmup_steps\":0,"
	       "\"device\":\"cpu\",\"timing_mode\":\"host\",\"tags\":{%s}}\n"
	       "{\"kind\":\"span_start\",\"id\":\"s1\",\"name\":\"e\",\"start_ns\":0,"
	       "\"span_kind\":\"function\",\"measured\":false}\n",
	    tags);
}

static void mem(struct text *t, uint64_t ts, uint64_t addr, uint64_t bytes, bool alloc,
		const char *device, const char *extra)
{
	put(t, "{\"kind\":\"memory\",\"timestamp_ns\":%llu,\"tensor_id\":\"0x%llx\","
	       "\"span_id\":\"s1\",\"device\":\"%s\",\"bytes\":%llu,\"action\":\"%s\","
	       "\"dtype\":\"u8\",\"category\":\"other\"%s}\n",
	    (unsigned long long)ts, (unsigned long long)addr, device, (unsigned long long)bytes,
	    alloc ? "alloc" : "free", extra ? extra : "");
}

static void tail(struct text *t, uint64_t end)
{
	put(t, "{\"kind\":\"span_end\",\"id\":\"s1\",\"duration_ns\":%llu}\n", (unsigned long long)end);
}

static void save(struct text *t, const char *name)
{
	char path[128];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(t->p, 1, t->len, f), t->len);
	ck_assert_int_eq(fclose(f), 0);
	t->len = 0;
}

static struct cgtrace_job *read_dir(unsigned jobs)
{
	const char *args[] = {dir};
	char **paths, err[256];
	size_t n;
	ck_assert_int_eq(cgtrace_job_paths(args, 1, &paths, &n, err, sizeof(err)), 0);
	const struct cgtrace_job_options o = {.jobs = jobs};
	struct cgtrace_job *j;
	ck_assert_int_eq(cgtrace_job_read((const char *const *)paths, n, &o, &j), 0);
	free(paths);
	return j;
}

/* The process of pid in the job. */
static const struct cgtrace_job_process *proc(const struct cgtrace_job *j, int64_t pid)
{
	for (size_t i = 0; i < j->n_processes; i++)
		if (j->processes[i].process.pid == pid)
			return &j->processes[i];
	ck_abort_msg("no process %lld", (long long)pid);
	return NULL;
}

#define BOOT "\"cgprobe_boot_id\":\"b1\""
#define UUID ",\"cgprobe_device_uuid\":\"GPU-aa\",\"cgprobe_device_name\":\"Fake GPU\""

/*
 * Two ranks on one GPU, started 1 ms apart on one boot. Rank 0 holds 100
 * from 10 us to 50 us of its own time; rank 1 holds 70 from 5 us to 60 us
 * of its own (1.005 ms to 1.060 ms of the job). Apart, they never
 * overlap: the sum's peak is rank 1's 70 alone... until rank 0's second
 * block, 40 from 1.002 ms to 1.100 ms of the job: 110 at 1.005 ms.
 */
static void two_ranks(void)
{
	struct text t = {0};
	head(&t, "\"pid\":\"10\",\"ppid\":\"1\",\"hostname\":\"n1\",\"RANK\":\"0\","
		 "\"WORLD_SIZE\":\"2\",\"cgprobe_clock_realtime_ns\":\"5000000000\","
		 "\"cgprobe_clock_monotonic_ns\":\"1000000000\",\"cgprobe_clock_error_ns\":\"40\"," BOOT);
	mem(&t, 10000, 0x1000, 100, true, "cuda:0", UUID);
	mem(&t, 50000, 0x1000, 100, false, "cuda:0", NULL);
	mem(&t, 1002000, 0x2000, 40, true, "cuda:0", NULL);
	mem(&t, 1100000, 0x2000, 40, false, "cuda:0", NULL);
	mem(&t, 1100000, 0x3000, 500, true, "cpu", NULL);
	tail(&t, 1200000);
	save(&t, "r0.jsonl");
	/* Its wall clock reads 3 us off: the monotonic clock places it. */
	head(&t, "\"pid\":\"11\",\"ppid\":\"1\",\"hostname\":\"n1\",\"RANK\":\"1\","
		 "\"cgprobe_clock_realtime_ns\":\"5001003000\","
		 "\"cgprobe_clock_monotonic_ns\":\"1001000000\",\"cgprobe_clock_error_ns\":\"900\"," BOOT);
	mem(&t, 5000, 0x1000, 70, true, "cuda:1", UUID);
	mem(&t, 60000, 0x1000, 70, false, "cuda:1", NULL);
	tail(&t, 100000);
	save(&t, "r1.jsonl");
	free(t.p);
}

/* The sum over time: each moment it changed, on the job's axis. */
struct walked {
	uint64_t t[16], bytes[16];
	size_t n;
};

static int on_sum(void *user, uint64_t t, uint64_t bytes)
{
	struct walked *w = user;
	ck_assert_uint_lt(w->n, 16);
	w->t[w->n] = t;
	w->bytes[w->n++] = bytes;
	return 0;
}

START_TEST(gpu_sum_exact)
{
	make_dir();
	two_ranks();
	struct cgtrace_job *j = read_dir(1);
	ck_assert_uint_eq(j->n_processes, 2);
	ck_assert_uint_eq(j->n_errors, 0);
	ck_assert_uint_eq(j->clock_error_ns, 0);
	ck_assert_uint_eq(proc(j, 10)->start_ns, 0);
	ck_assert_uint_eq(proc(j, 11)->start_ns, 1000000);
	ck_assert_uint_eq(j->n_gpus, 1);
	const struct cgtrace_job_gpu *g = &j->gpus[0];
	ck_assert_str_eq(g->uuid, "GPU-aa");
	ck_assert_str_eq(g->name, "Fake GPU");
	ck_assert_uint_eq(g->n_processes, 2);
	ck_assert_uint_eq(g->peak_bytes, 110);
	ck_assert_uint_eq(g->peak_ns, 1005000);
	ck_assert_uint_eq(g->n_shares, 2);
	ck_assert_uint_eq(j->processes[g->shares[0].process].process.pid, 11);
	ck_assert_str_eq(g->shares[0].device, "cuda:1");
	ck_assert_uint_eq(g->shares[0].bytes, 70);
	ck_assert_uint_eq(g->shares[1].bytes, 40);
	struct walked w = {.n = 0};
	ck_assert_int_eq(cgtrace_job_gpu_each(j, 0, on_sum, &w), 0);
	const uint64_t t[] = {10000, 50000, 1002000, 1005000, 1060000, 1100000};
	const uint64_t b[] = {100, 0, 40, 110, 40, 0};
	ck_assert_uint_eq(w.n, 6);
	for (size_t i = 0; i < 6; i++) {
		ck_assert_uint_eq(w.t[i], t[i]);
		ck_assert_uint_eq(w.bytes[i], b[i]);
	}
	ck_assert_int_eq(cgtrace_job_gpu_each(j, 1, on_sum, &w), -EINVAL);
	/* Each process's own peaks, on the job's axis. */
	ck_assert_uint_eq(proc(j, 10)->devices[1].peak_ns, 10000);
	ck_assert_str_eq(proc(j, 11)->devices[0].device, "cuda:1");
	ck_assert_uint_eq(proc(j, 11)->devices[0].peak_ns, 1005000);
	ck_assert_int_eq(proc(j, 11)->process.rank, 1);
	ck_assert_str_eq(proc(j, 11)->process.rank_source, "RANK");
	ck_assert_int_eq(proc(j, 10)->process.world_size, 2);
	ck_assert_uint_eq(j->span_ns, 1200000);
	cgtrace_job_free(j);
	remove_dir();
}
END_TEST

/* Several threads read the same job to the same figures. */
START_TEST(threads_agree)
{
	make_dir();
	two_ranks();
	struct cgtrace_job *a = read_dir(1), *b = read_dir(4);
	ck_assert_uint_eq(a->n_processes, b->n_processes);
	ck_assert_uint_eq(a->gpus[0].peak_bytes, b->gpus[0].peak_bytes);
	ck_assert_uint_eq(a->gpus[0].peak_ns, b->gpus[0].peak_ns);
	for (size_t i = 0; i < a->n_processes; i++) {
		ck_assert_uint_eq(a->processes[i].peak_bytes, b->processes[i].peak_bytes);
		ck_assert_uint_eq(a->processes[i].start_ns, b->processes[i].start_ns);
		ck_assert_uint_eq(a->tree[i], b->tree[i]);
	}
	cgtrace_job_free(a);
	cgtrace_job_free(b);
	remove_dir();
}
END_TEST

/*
 * A parent and its fork child, which inherits 1000 bytes on the host and
 * 300 on the GPU (cgprobe_preexisting) and adds 50 of its own on each.
 */
START_TEST(fork_child_counted_once)
{
	make_dir();
	struct text t = {0};
	head(&t, "\"pid\":\"20\",\"ppid\":\"1\",\"hostname\":\"n1\"");
	mem(&t, 100, 0x1000, 1000, true, "cpu", NULL);
	mem(&t, 100, 0x9000, 300, true, "cuda:0", UUID);
	tail(&t, 10000);
	save(&t, "p.jsonl");
	head(&t, "\"pid\":\"21\",\"ppid\":\"20\",\"forked_from\":\"20\",\"hostname\":\"n1\"");
	mem(&t, 0, 0x1000, 1000, true, "cpu", ",\"cgprobe_preexisting\":true");
	mem(&t, 0, 0x9000, 300, true, "cuda:0", UUID ",\"cgprobe_preexisting\":true");
	mem(&t, 200, 0x2000, 50, true, "cpu", NULL);
	mem(&t, 200, 0xa000, 50, true, "cuda:0", NULL);
	tail(&t, 1000);
	save(&t, "c.jsonl");
	free(t.p);
	struct cgtrace_job *j = read_dir(2);
	const struct cgtrace_job_process *p = proc(j, 20), *c = proc(j, 21);
	ck_assert_int_eq(c->parent, p - j->processes);
	ck_assert_uint_eq(c->depth, 1);
	ck_assert_uint_eq(j->tree[0], (size_t)(p - j->processes));
	ck_assert_uint_eq(c->peak_bytes, 1050);
	ck_assert_uint_eq(c->leaked_bytes, 100); /* its own, not the inherited */
	ck_assert_uint_eq(p->leaked_bytes, 1300);
	ck_assert_uint_eq(j->n_hosts, 1);
	ck_assert_uint_eq(j->hosts[0].peak_sum, 1000 + 50);
	ck_assert_uint_eq(j->hosts[0].leaked_bytes, 1400);
	ck_assert_uint_eq(j->n_gpus, 1);
	ck_assert_uint_eq(j->gpus[0].peak_bytes, 350);
	cgtrace_job_free(j);
	remove_dir();
}
END_TEST

/* The rank: the process group's span first, then the launchers' variables in order. */
START_TEST(rank_sources)
{
	make_dir();
	struct text t = {0};
	head(&t, "\"pid\":\"1\",\"SLURM_PROCID\":\"7\",\"OMPI_COMM_WORLD_RANK\":\"6\","
		 "\"OMPI_COMM_WORLD_LOCAL_RANK\":\"2\",\"OMPI_COMM_WORLD_SIZE\":\"8\"");
	tail(&t, 10);
	save(&t, "a.jsonl");
	head(&t, "\"pid\":\"2\",\"RANK\":\"0\",\"WORLD_SIZE\":\"1\"");
	put(&t, "{\"kind\":\"span_start\",\"id\":\"s2\",\"parent_id\":\"s1\",\"name\":"
		"\"process_group\",\"start_ns\":5,\"span_kind\":\"function\",\"measured\":false,"
		"\"cgprobe_rank\":3,\"cgprobe_world_size\":4}\n"
		"{\"kind\":\"span_end\",\"id\":\"s2\",\"duration_ns\":0}\n");
	tail(&t, 10);
	save(&t, "b.jsonl");
	head(&t, "\"pid\":\"3\"");
	tail(&t, 10);
	save(&t, "c.jsonl");
	free(t.p);
	struct cgtrace_job *j = read_dir(1);
	const struct cgtrace_job_process *a = proc(j, 1), *b = proc(j, 2), *c = proc(j, 3);
	ck_assert_int_eq(a->process.rank, 6);
	ck_assert_str_eq(a->process.rank_source, "OMPI_COMM_WORLD_RANK");
	ck_assert_int_eq(a->process.local_rank, 2);
	ck_assert_int_eq(a->process.world_size, 8);
	ck_assert_int_eq(b->process.rank, 3);
	ck_assert_str_eq(b->process.rank_source, "cgprobe_rank");
	ck_assert_int_eq(b->process.world_size, 4);
	ck_assert_int_eq(c->process.rank, -1);
	ck_assert_ptr_null(c->process.rank_source);
	/* Without clock tags: the meta timestamp, to the millisecond. */
	ck_assert(!c->process.has_clock);
	ck_assert_uint_eq(c->process.realtime_ns, 1785866400250000000ull);
	ck_assert_uint_eq(j->clock_error_ns, 2000000);
	cgtrace_job_free(j);
	remove_dir();
}
END_TEST

/* The rank span's rules, and its fields kept by an export. */
START_TEST(rank_span_rules)
{
	struct text t = {0};
	head(&t, "");
	put(&t, "{\"kind\":\"span_start\",\"id\":\"s2\",\"name\":\"process_group\",\"start_ns\":5,"
		"\"span_kind\":\"function\",\"measured\":false,\"cgprobe_rank\":4,"
		"\"cgprobe_world_size\":4}\n");
	struct cgtrace_doc *d;
	char err[256];
	ck_assert_int_eq(cgtrace_doc_read_mem("t.jsonl", t.p, t.len, NULL, &d, err, sizeof(err)),
			 -EBADMSG);
	ck_assert_str_eq(err, "t.jsonl:3: span `s2`: cgprobe_rank 4 is not below "
			      "cgprobe_world_size 4");
	t.len = 0;
	head(&t, "");
	put(&t, "{\"kind\":\"span_start\",\"id\":\"s2\",\"name\":\"process_group\",\"start_ns\":5,"
		"\"span_kind\":\"function\",\"measured\":false,\"cgprobe_world_size\":4}\n");
	ck_assert_int_eq(cgtrace_doc_read_mem("t.jsonl", t.p, t.len, NULL, &d, err, sizeof(err)),
			 -EBADMSG);
	ck_assert_str_eq(err, "t.jsonl:3: span `s2`: cgprobe_world_size without cgprobe_rank");
	t.len = 0;
	head(&t, "");
	put(&t, "{\"kind\":\"span_start\",\"id\":\"s2\",\"name\":\"process_group\",\"start_ns\":5,"
		"\"span_kind\":\"function\",\"measured\":false,\"cgprobe_rank\":1}\n");
	ck_assert_int_eq(cgtrace_doc_read_mem("t.jsonl", t.p, t.len, NULL, &d, err, sizeof(err)), 0);
	char path[] = "/tmp/cgjob-export.XXXXXX";
	int fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(cgtrace_doc_export_jsonl(d, fd), 0);
	cgtrace_doc_free(d);
	char buf[4096] = "";
	ck_assert_int_ge(pread(fd, buf, sizeof(buf) - 1, 0), 1);
	close(fd);
	unlink(path);
	ck_assert_ptr_nonnull(strstr(buf, "\"cgprobe_rank\":1"));
	ck_assert_ptr_null(strstr(buf, "cgprobe_world_size"));
	free(t.p);
}
END_TEST

/* A folder's traces by name, its manifest and reports left out; a bad trace is one process's error. */
START_TEST(folder_and_errors)
{
	make_dir();
	struct text t = {0};
	head(&t, "\"pid\":\"5\"");
	tail(&t, 10);
	save(&t, "b.jsonl");
	put(&t, "{\"trace\":\"b.jsonl\"}\n");
	save(&t, "cgprobe.job");
	put(&t, "<html>");
	save(&t, "b.jsonl.html");
	put(&t, "{\"kind\":\"meta\"}\n");
	save(&t, "a.jsonl");
	free(t.p);
	const char *args[] = {dir};
	char **paths, err[256];
	size_t n;
	ck_assert_int_eq(cgtrace_job_paths(args, 1, &paths, &n, err, sizeof(err)), 0);
	ck_assert_uint_eq(n, 2);
	ck_assert_ptr_nonnull(strstr(paths[0], "/a.jsonl"));
	ck_assert_ptr_nonnull(strstr(paths[1], "/b.jsonl"));
	ck_assert_ptr_null(paths[2]);
	struct cgtrace_job *j;
	ck_assert_int_eq(cgtrace_job_read((const char *const *)paths, n, NULL, &j), 0);
	ck_assert_uint_eq(j->n_errors, 1);
	ck_assert_int_eq(j->processes[0].error, -EBADMSG);
	ck_assert_ptr_nonnull(strstr(j->processes[0].message, "a.jsonl:1:"));
	ck_assert_int_eq(j->processes[1].error, 0);
	ck_assert_int_eq(j->processes[1].process.pid, 5);
	cgtrace_job_free(j);
	free(paths);
	remove_dir();
	make_dir();
	ck_assert_int_eq(cgtrace_job_paths(args, 1, &paths, &n, err, sizeof(err)), -ENODATA);
	ck_assert_ptr_nonnull(strstr(err, "no traces in this folder"));
	remove_dir();
	const char *missing[] = {"/nonexistent/dir/t.jsonl"};
	ck_assert_int_eq(cgtrace_job_paths(missing, 1, &paths, &n, err, sizeof(err)), 0);
	ck_assert_int_eq(cgtrace_job_read((const char *const *)paths, n, NULL, &j), 0);
	ck_assert_int_eq(j->processes[0].error, -ENOENT);
	cgtrace_job_free(j);
	free(paths);
}
END_TEST

TEST_SUITE(job_suite, "job")
{
	test_case(s, "job:gpus", 30, gpu_sum_exact, threads_agree);
	test_case(s, "job:processes", 30, fork_child_counted_once, rank_sources);
	test_case(s, "job:reads", 30, rank_span_rules, folder_and_errors);
}

TEST_MAIN(job_suite);
