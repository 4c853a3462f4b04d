/* SPDX-License-Identifier: MIT */
/*
 * cgprobe-demo-mlp: a small multi-layer perceptron trained on a generated
 * two-class spiral. It allocates the way a deep-learning framework does
 * (parameters once, optimizer state lazily, a fresh tensor per op, gradients
 * per op, activations freed as backward consumes them) so that
 *
 *	LD_PRELOAD=libcgprobe.so ./cgprobe-demo-mlp
 *
 * gives a memory profile shaped like a real training run. Each training
 * step is marked as an update (cgprobe_update_begin/end), so a capture
 * window (CGPROBE_CAPTURE=update) can take one; parameters are marked as
 * such (cgprobe_mark_parameters), and worker threads named.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CGPROBE_OPTIONAL
#include "cgprobe.h"

#define PROG "cgprobe-demo-mlp"
#define USAGE "usage: " PROG " [--steps N] [--batch B] [--hidden H] [--threads T]"

#define N_FEATURES 64
#define N_CLASSES 2
#define N_SAMPLES 1024
#define N_LAYERS 3
#define N_PARAMS (2 * N_LAYERS)
#define MAX_NODES (3 * N_LAYERS + 1)
#define MAX_THREADS 64
#define TENSOR_ALIGN 64

#define STR_(x) #x
#define STR(x) STR_(x)

#define LEARNING_RATE 1e-3f
#define ADAM_BETA1 0.9f
#define ADAM_BETA2 0.999f
#define ADAM_EPS 1e-8f

enum dtype {
	DTYPE_F32,
};

/*
 * Which allocator backs a tensor. Frameworks mix them (pinned pools, aligned
 * kernels, zeroed state), and the profile should show each of them.
 */
enum alloc_kind {
	ALLOC_MALLOC,
	ALLOC_CALLOC,
	ALLOC_POSIX_MEMALIGN,
	ALLOC_ALIGNED,
};

struct tensor {
	size_t shape[2];
	enum dtype dtype;
	float *data;
};

struct options {
	long steps;
	long batch;
	long hidden;
	long threads;
};

struct rng {
	uint64_t state;
};

struct dataset {
	struct tensor *x;
	int *labels;
};

struct batch {
	struct tensor *x;
	int *labels;
};

struct param {
	struct tensor *value;
	struct tensor *grad;
	struct tensor *m;
	struct tensor *v;
};

/* Layer l has weight params[2 * l] ([in, out]) and bias params[2 * l + 1] ([1, out]). */
struct model {
	struct param params[N_PARAMS];
	long adam_t;
};

enum op {
	OP_MATMUL,
	OP_BIAS,
	OP_RELU,
	OP_XENT,
};

struct node {
	enum op op;
	struct tensor *in;
	struct param *param;
	struct tensor *out;
};

/* The autograd record of one forward pass, walked backwards by tape_backward(). */
struct tape {
	struct node nodes[MAX_NODES];
	size_t len;
	struct tensor *input;
	const int *labels;
	int threads;
};

struct history {
	float *loss;
	size_t len;
	size_t cap;
};

struct mm_task {
	void (*fn)(struct mm_task *task);
	const char *span_name;
	enum cgprobe_step step;
	const struct tensor *x;
	const struct tensor *w;
	const struct tensor *dy;
	const float *wt;
	struct tensor *y;
	struct tensor *dx;
	float *dw_part;
	size_t lo;
	size_t hi;
};

/* A demo that cannot allocate has nothing left worth profiling. */
static _Noreturn void die(const char *what)
{
	fprintf(stderr, "%s: %s\n", PROG, what);
	exit(1);
}

static uint64_t span_begin(const char *name, enum cgprobe_step step)
{
	if (cgprobe_span_begin)
		return cgprobe_span_begin(name, step);
	return 0;
}

/* Update boundaries and parameter memory, when the probe is there. */
static void update_begin(void)
{
	if (cgprobe_update_begin)
		cgprobe_update_begin();
}

static void update_end(void)
{
	if (cgprobe_update_end)
		cgprobe_update_end();
}

static void mark_parameters(const struct tensor *t)
{
	if (cgprobe_mark_parameters)
		cgprobe_mark_parameters(t->data, (uint64_t)t->shape[0] * t->shape[1] * sizeof(float));
}

/* Id 0 means the probe is loaded but not recording: there is no span to close. */
static void span_end(uint64_t id)
{
	if (cgprobe_span_end && id)
		cgprobe_span_end(id);
}

static uint64_t rng_next(struct rng *r)
{
	uint64_t z = (r->state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static float rng_uniform(struct rng *r)
{
	return (float)(rng_next(r) >> 40) * (1.0f / 16777216.0f);
}

static float rng_normal(struct rng *r)
{
	float u = rng_uniform(r) + 1e-7f;
	float v = rng_uniform(r);

	return sqrtf(-2.0f * logf(u)) * cosf(6.2831853f * v);
}

/* aligned_alloc() wants a size that is a multiple of the alignment. */
static size_t round_up(size_t n, size_t align)
{
	return (n + align - 1) / align * align;
}

static float *alloc_floats(size_t n, enum alloc_kind kind)
{
	size_t bytes = n * sizeof(float);
	void *p = NULL;

	switch (kind) {
	case ALLOC_MALLOC:
		p = malloc(bytes);
		break;
	case ALLOC_CALLOC:
		p = calloc(n, sizeof(float));
		break;
	case ALLOC_POSIX_MEMALIGN:
		if (posix_memalign(&p, TENSOR_ALIGN, bytes))
			p = NULL;
		break;
	case ALLOC_ALIGNED:
		p = aligned_alloc(TENSOR_ALIGN, round_up(bytes, TENSOR_ALIGN));
		break;
	}
	if (!p)
		die("out of memory");
	return p;
}

static struct tensor *tensor_new(size_t rows, size_t cols, enum alloc_kind kind)
{
	struct tensor *t = malloc(sizeof(*t));

	if (!t)
		die("out of memory");
	t->shape[0] = rows;
	t->shape[1] = cols;
	t->dtype = DTYPE_F32;
	t->data = alloc_floats(rows * cols, kind);
	return t;
}

static void tensor_free(struct tensor *t)
{
	if (!t)
		return;
	free(t->data);
	free(t);
}

static size_t tensor_numel(const struct tensor *t)
{
	return t->shape[0] * t->shape[1];
}

/*
 * Random Fourier features lift the 2-D spiral into N_FEATURES inputs, so the
 * first layer has a realistic width and the classes become easier to separate.
 */
static void spiral_features(float px, float py, const float *proj, float *out)
{
	for (size_t j = 0; j < N_FEATURES; j++) {
		const float *p = proj + 3 * j;

		out[j] = cosf(p[0] * px + p[1] * py + p[2]);
	}
}

static void dataset_make(struct dataset *ds, struct rng *rng)
{
	float *proj = malloc(3 * N_FEATURES * sizeof(*proj));

	if (!proj)
		die("out of memory");
	for (size_t j = 0; j < N_FEATURES; j++) {
		proj[3 * j] = 3.0f * rng_normal(rng);
		proj[3 * j + 1] = 3.0f * rng_normal(rng);
		proj[3 * j + 2] = 6.2831853f * rng_uniform(rng);
	}
	ds->x = tensor_new(N_SAMPLES, N_FEATURES, ALLOC_MALLOC);
	ds->labels = malloc(N_SAMPLES * sizeof(*ds->labels));
	if (!ds->labels)
		die("out of memory");
	for (size_t i = 0; i < N_SAMPLES; i++) {
		int cls = (int)(i % N_CLASSES);
		float t = rng_uniform(rng);
		float theta =
		    3.0f * 3.1415927f * t + 3.1415927f * (float)cls + 0.2f * rng_normal(rng);

		spiral_features(t * cosf(theta), t * sinf(theta), proj,
		                ds->x->data + i * N_FEATURES);
		ds->labels[i] = cls;
	}
	free(proj);
}

static void dataset_free(struct dataset *ds)
{
	tensor_free(ds->x);
	free(ds->labels);
}

static void batch_sample(struct batch *b, const struct dataset *ds, size_t size, struct rng *rng)
{
	b->x = tensor_new(size, N_FEATURES, ALLOC_MALLOC);
	b->labels = malloc(size * sizeof(*b->labels));
	if (!b->labels)
		die("out of memory");
	for (size_t i = 0; i < size; i++) {
		size_t k = (size_t)(rng_next(rng) % N_SAMPLES);

		memcpy(b->x->data + i * N_FEATURES, ds->x->data + k * N_FEATURES,
		       N_FEATURES * sizeof(float));
		b->labels[i] = ds->labels[k];
	}
}

static void batch_free(struct batch *b)
{
	tensor_free(b->x);
	free(b->labels);
}

static void model_init(struct model *m, size_t hidden, struct rng *rng)
{
	const size_t dims[N_LAYERS + 1] = {N_FEATURES, hidden, hidden, N_CLASSES};

	memset(m, 0, sizeof(*m));
	for (size_t l = 0; l < N_LAYERS; l++) {
		struct tensor *w = tensor_new(dims[l], dims[l + 1], ALLOC_POSIX_MEMALIGN);
		struct tensor *b = tensor_new(1, dims[l + 1], ALLOC_POSIX_MEMALIGN);
		/* He-uniform keeps ReLU activations from shrinking or blowing up with depth. */
		float bound = sqrtf(6.0f / (float)dims[l]);

		for (size_t i = 0; i < tensor_numel(w); i++)
			w->data[i] = bound * (2.0f * rng_uniform(rng) - 1.0f);
		memset(b->data, 0, tensor_numel(b) * sizeof(float));
		mark_parameters(w);
		mark_parameters(b);
		m->params[2 * l].value = w;
		m->params[2 * l + 1].value = b;
	}
}

static void model_free(struct model *m)
{
	for (size_t i = 0; i < N_PARAMS; i++) {
		struct param *p = &m->params[i];

		tensor_free(p->value);
		tensor_free(p->grad);
		tensor_free(p->m);
		tensor_free(p->v);
	}
}

/*
 * y += a * x. Blocks of 8 let the basic-block vectorizer of a plain -O2 build
 * use SIMD, which it does not do for a loop of unknown length.
 */
static void axpy(float a, const float *restrict x, float *restrict y, size_t n)
{
	size_t j = 0;

	for (; j + 8 <= n; j += 8)
		for (size_t u = 0; u < 8; u++)
			y[j + u] += a * x[j + u];
	for (; j < n; j++)
		y[j] += a * x[j];
}

/*
 * Rows are accumulated in a buffer private to the thread, so threads never
 * write into cache lines that a neighbour's rows share until the row is done.
 */
static void mm_forward_rows(struct mm_task *task)
{
	size_t in = task->w->shape[0], out = task->w->shape[1];
	float *acc = malloc(out * sizeof(*acc));

	if (!acc)
		die("out of memory");
	for (size_t r = task->lo; r < task->hi; r++) {
		const float *x = task->x->data + r * in;

		memset(acc, 0, out * sizeof(*acc));
		for (size_t k = 0; k < in; k++)
			axpy(x[k], task->w->data + k * out, acc, out);
		memcpy(task->y->data + r * out, acc, out * sizeof(*acc));
	}
	free(acc);
}

/*
 * Each thread sums its rows' weight gradient into its own partial buffer;
 * the caller adds the partials up, which needs no locking.
 */
static void mm_backward_rows(struct mm_task *task)
{
	size_t in = task->w->shape[0], out = task->w->shape[1];
	float *part = calloc(in * out, sizeof(*part));

	if (!part)
		die("out of memory");
	for (size_t r = task->lo; r < task->hi; r++) {
		const float *dy = task->dy->data + r * out;
		float *dx = task->dx ? task->dx->data + r * in : NULL;

		for (size_t k = 0; k < in; k++)
			axpy(task->x->data[r * in + k], dy, part + k * out, out);
		if (!dx)
			continue;
		memset(dx, 0, in * sizeof(*dx));
		for (size_t j = 0; j < out; j++)
			axpy(dy[j], task->wt + j * in, dx, in);
	}
	task->dw_part = part;
}

static void *mm_thread(void *arg)
{
	struct mm_task *task = arg;
	if (cgprobe_thread_name)
		cgprobe_thread_name("mlp-matmul");
	uint64_t span = span_begin(task->span_name, task->step);

	task->fn(task);
	span_end(span);
	return NULL;
}

/* Splits rows over up to `threads` tasks; the calling thread runs the first itself. */
static size_t mm_run(struct mm_task *tasks, size_t rows, int threads)
{
	pthread_t tids[MAX_THREADS];
	size_t n = (size_t)threads < rows ? (size_t)threads : rows;

	for (size_t i = 0; i < n; i++) {
		if (i)
			tasks[i] = tasks[0];
		tasks[i].lo = rows * i / n;
		tasks[i].hi = rows * (i + 1) / n;
	}
	for (size_t i = 1; i < n; i++)
		if (pthread_create(&tids[i], NULL, mm_thread, &tasks[i]))
			die("cannot create thread");
	tasks[0].fn(&tasks[0]);
	for (size_t i = 1; i < n; i++)
		pthread_join(tids[i], NULL);
	return n;
}

static struct node *tape_push(struct tape *t, enum op op, struct tensor *in, struct param *p)
{
	struct node *nd = &t->nodes[t->len++];

	nd->op = op;
	nd->in = in;
	nd->param = p;
	nd->out = NULL;
	return nd;
}

static struct tensor *op_matmul(struct tape *t, struct tensor *x, struct param *w)
{
	struct node *nd = tape_push(t, OP_MATMUL, x, w);
	struct mm_task tasks[MAX_THREADS];

	nd->out = tensor_new(x->shape[0], w->value->shape[1], ALLOC_ALIGNED);
	tasks[0] = (struct mm_task){
		.fn = mm_forward_rows,
		.span_name = "forward.matmul",
		.step = CGPROBE_STEP_FORWARD,
		.x = x,
		.w = w->value,
		.y = nd->out,
	};
	mm_run(tasks, x->shape[0], t->threads);
	return nd->out;
}

static struct tensor *op_bias(struct tape *t, struct tensor *x, struct param *b)
{
	struct node *nd = tape_push(t, OP_BIAS, x, b);
	size_t rows = x->shape[0], cols = x->shape[1];

	nd->out = tensor_new(rows, cols, ALLOC_ALIGNED);
	for (size_t r = 0; r < rows; r++)
		for (size_t j = 0; j < cols; j++)
			nd->out->data[r * cols + j] = x->data[r * cols + j] + b->value->data[j];
	return nd->out;
}

static struct tensor *op_relu(struct tape *t, struct tensor *x)
{
	struct node *nd = tape_push(t, OP_RELU, x, NULL);

	nd->out = tensor_new(x->shape[0], x->shape[1], ALLOC_ALIGNED);
	for (size_t i = 0; i < tensor_numel(x); i++)
		nd->out->data[i] = x->data[i] > 0.0f ? x->data[i] : 0.0f;
	return nd->out;
}

/* Softmax and cross-entropy in one op: the probabilities are all backward needs. */
static float op_xent(struct tape *t, struct tensor *logits)
{
	struct node *nd = tape_push(t, OP_XENT, logits, NULL);
	size_t rows = logits->shape[0], cols = logits->shape[1];
	double loss = 0.0;

	nd->out = tensor_new(rows, cols, ALLOC_ALIGNED);
	for (size_t r = 0; r < rows; r++) {
		const float *z = logits->data + r * cols;
		float *p = nd->out->data + r * cols;
		float max = z[0], sum = 0.0f;

		for (size_t j = 1; j < cols; j++)
			max = z[j] > max ? z[j] : max;
		for (size_t j = 0; j < cols; j++) {
			p[j] = expf(z[j] - max);
			sum += p[j];
		}
		for (size_t j = 0; j < cols; j++)
			p[j] /= sum;
		loss -= log(fmax(p[t->labels[r]], 1e-12));
	}
	return (float)(loss / (double)rows);
}

static float model_forward(struct model *m, struct tape *t)
{
	struct tensor *h = t->input;

	for (size_t l = 0; l < N_LAYERS; l++) {
		h = op_matmul(t, h, &m->params[2 * l]);
		h = op_bias(t, h, &m->params[2 * l + 1]);
		if (l + 1 < N_LAYERS)
			h = op_relu(t, h);
	}
	return op_xent(t, h);
}

static void param_add_grad(struct param *p, struct tensor *g)
{
	if (!p->grad) {
		p->grad = g;
		return;
	}
	for (size_t i = 0; i < tensor_numel(g); i++)
		p->grad->data[i] += g->data[i];
	tensor_free(g);
}

static struct tensor *xent_backward(const struct tape *t, const struct node *nd)
{
	const struct tensor *p = nd->out;
	size_t rows = p->shape[0], cols = p->shape[1];
	struct tensor *dz = tensor_new(rows, cols, ALLOC_MALLOC);

	/* The loss is a mean over the batch, so each row's gradient carries 1 / rows. */
	for (size_t r = 0; r < rows; r++) {
		for (size_t j = 0; j < cols; j++)
			dz->data[r * cols + j] = p->data[r * cols + j] / (float)rows;
		dz->data[r * cols + (size_t)t->labels[r]] -= 1.0f / (float)rows;
	}
	return dz;
}

static struct tensor *relu_backward(const struct node *nd, struct tensor *dy)
{
	struct tensor *dx = tensor_new(dy->shape[0], dy->shape[1], ALLOC_MALLOC);

	for (size_t i = 0; i < tensor_numel(dy); i++)
		dx->data[i] = nd->out->data[i] > 0.0f ? dy->data[i] : 0.0f;
	tensor_free(dy);
	return dx;
}

/* The gradient of an addition is the incoming one: it passes through, as in autograd. */
static struct tensor *bias_backward(struct node *nd, struct tensor *dy)
{
	size_t rows = dy->shape[0], cols = dy->shape[1];
	struct tensor *db = tensor_new(1, cols, ALLOC_CALLOC);

	for (size_t r = 0; r < rows; r++)
		for (size_t j = 0; j < cols; j++)
			db->data[j] += dy->data[r * cols + j];
	param_add_grad(nd->param, db);
	return dy;
}

/* A transposed copy of w turns dx = dy w^T into row updates that vectorize like the forward. */
static float *transpose_scratch(const struct tensor *w)
{
	size_t rows = w->shape[0], cols = w->shape[1];
	float *wt = malloc(rows * cols * sizeof(*wt));

	if (!wt)
		die("out of memory");
	for (size_t i = 0; i < rows; i++)
		for (size_t j = 0; j < cols; j++)
			wt[j * rows + i] = w->data[i * cols + j];
	return wt;
}

static struct tensor *matmul_backward(const struct tape *t, struct node *nd, struct tensor *dy)
{
	const struct tensor *w = nd->param->value;
	struct tensor *dw = tensor_new(w->shape[0], w->shape[1], ALLOC_CALLOC);
	struct mm_task tasks[MAX_THREADS];
	float *wt = NULL;
	size_t n;

	tasks[0] = (struct mm_task){
		.fn = mm_backward_rows,
		.span_name = "backward.matmul",
		.step = CGPROBE_STEP_BACKWARD,
		.x = nd->in,
		.w = w,
		.dy = dy,
	};
	/* The network's input needs no gradient. */
	if (nd->in != t->input) {
		tasks[0].dx = tensor_new(nd->in->shape[0], nd->in->shape[1], ALLOC_MALLOC);
		tasks[0].wt = wt = transpose_scratch(w);
	}
	n = mm_run(tasks, dy->shape[0], t->threads);
	free(wt);
	for (size_t i = 0; i < n; i++) {
		axpy(1.0f, tasks[i].dw_part, dw->data, tensor_numel(dw));
		free(tasks[i].dw_part);
	}
	param_add_grad(nd->param, dw);
	tensor_free(dy);
	return tasks[0].dx;
}

static struct tensor *node_backward(const struct tape *t, struct node *nd, struct tensor *dy)
{
	switch (nd->op) {
	case OP_XENT:
		return xent_backward(t, nd);
	case OP_RELU:
		return relu_backward(nd, dy);
	case OP_BIAS:
		return bias_backward(nd, dy);
	case OP_MATMUL:
		return matmul_backward(t, nd, dy);
	}
	return NULL;
}

/* Activations are freed as soon as their op's backward has run: nothing later reads them. */
static void tape_backward(struct tape *t)
{
	struct tensor *grad = NULL;

	while (t->len) {
		struct node *nd = &t->nodes[--t->len];

		grad = node_backward(t, nd, grad);
		tensor_free(nd->out);
		nd->out = NULL;
	}
	tensor_free(grad);
}

/* For a forward pass that no backward follows, as in evaluation. */
static void tape_release(struct tape *t)
{
	while (t->len)
		tensor_free(t->nodes[--t->len].out);
}

/* Adam's moments cost two parameter-sized tensors, created when first needed, as frameworks do. */
static void adam_update(struct param *p, float lr_t)
{
	size_t n = tensor_numel(p->value);

	if (!p->m) {
		p->m = tensor_new(p->value->shape[0], p->value->shape[1], ALLOC_CALLOC);
		p->v = tensor_new(p->value->shape[0], p->value->shape[1], ALLOC_CALLOC);
	}
	for (size_t i = 0; i < n; i++) {
		float g = p->grad->data[i];
		float *m = &p->m->data[i], *v = &p->v->data[i];

		*m = ADAM_BETA1 * *m + (1.0f - ADAM_BETA1) * g;
		*v = ADAM_BETA2 * *v + (1.0f - ADAM_BETA2) * g * g;
		p->value->data[i] -= lr_t * *m / (sqrtf(*v) + ADAM_EPS);
	}
	tensor_free(p->grad);
	p->grad = NULL;
}

static void adam_step(struct model *m)
{
	double t = (double)++m->adam_t;
	/* Bias correction folded into the step size. */
	float lr_t =
	    (float)(LEARNING_RATE * sqrt(1.0 - pow(ADAM_BETA2, t)) / (1.0 - pow(ADAM_BETA1, t)));

	for (size_t i = 0; i < N_PARAMS; i++)
		adam_update(&m->params[i], lr_t);
}

static float train_step(struct model *m, const struct dataset *ds, const struct options *o,
                        struct rng *rng)
{
	update_begin();
	uint64_t step = span_begin("step", CGPROBE_STEP_NONE);
	struct batch b;
	struct tape t = {.threads = (int)o->threads};
	uint64_t span;
	float loss;

	batch_sample(&b, ds, (size_t)o->batch, rng);
	t.input = b.x;
	t.labels = b.labels;

	span = span_begin("forward", CGPROBE_STEP_FORWARD);
	loss = model_forward(m, &t);
	span_end(span);

	span = span_begin("backward", CGPROBE_STEP_BACKWARD);
	tape_backward(&t);
	span_end(span);

	span = span_begin("optimizer", CGPROBE_STEP_OPTIMIZER);
	adam_step(m);
	span_end(span);

	batch_free(&b);
	span_end(step);
	update_end();
	return loss;
}

static size_t count_correct(const struct tensor *probs, const int *labels)
{
	size_t correct = 0;

	for (size_t r = 0; r < probs->shape[0]; r++) {
		const float *p = probs->data + r * N_CLASSES;
		int best = 0;

		for (int j = 1; j < N_CLASSES; j++)
			best = p[j] > p[best] ? j : best;
		correct += best == labels[r];
	}
	return correct;
}

static float evaluate(struct model *m, const struct dataset *ds, const struct options *o,
                      float *accuracy)
{
	uint64_t span = span_begin("eval", CGPROBE_STEP_FORWARD);
	struct tape t = {.input = ds->x, .labels = ds->labels, .threads = (int)o->threads};
	float loss = model_forward(m, &t);

	*accuracy = (float)count_correct(t.nodes[t.len - 1].out, ds->labels) / N_SAMPLES;
	tape_release(&t);
	span_end(span);
	return loss;
}

static void history_push(struct history *h, float loss)
{
	if (h->len == h->cap) {
		size_t cap = h->cap ? 2 * h->cap : 8;
		float *p = realloc(h->loss, cap * sizeof(*p));

		if (!p)
			die("out of memory");
		h->loss = p;
		h->cap = cap;
	}
	h->loss[h->len++] = loss;
}

/* The mean over the last n steps: one mini-batch's loss is too noisy to show a trend. */
static float history_mean(const struct history *h, size_t n)
{
	double sum = 0.0;

	for (size_t i = h->len - n; i < h->len; i++)
		sum += h->loss[i];
	return (float)(sum / (double)n);
}

static void train(const struct options *o)
{
	struct rng rng = {.state = 42};
	struct history hist = {0};
	struct dataset ds;
	struct model m;
	size_t every = o->steps >= 5 ? (size_t)o->steps / 5 : 1;
	float loss, accuracy;

	dataset_make(&ds, &rng);
	model_init(&m, (size_t)o->hidden, &rng);
	printf("mlp %d-%ld-%ld-%d, %d samples, batch %ld, %ld steps, %ld thread%s\n", N_FEATURES,
	       o->hidden, o->hidden, N_CLASSES, N_SAMPLES, o->batch, o->steps, o->threads,
	       o->threads == 1 ? "" : "s");
	for (long s = 1; s <= o->steps; s++) {
		history_push(&hist, train_step(&m, &ds, o, &rng));
		if ((size_t)s % every == 0)
			printf("step %4ld  loss %.4f\n", s, history_mean(&hist, every));
	}
	loss = evaluate(&m, &ds, o, &accuracy);
	printf("final loss %.4f  accuracy %.1f%%\n", loss, 100.0f * accuracy);
	free(hist.loss);
	model_free(&m);
	dataset_free(&ds);
}

static _Noreturn void usage_error(const char *what, const char *arg)
{
	fprintf(stderr, "%s: %s '%s' (" USAGE ")\n", PROG, what, arg);
	exit(2);
}

/* optopt names a bad short option even inside a cluster such as -hx, where arg is the cluster. */
static _Noreturn void bad_option(const char *arg)
{
	char name[3] = {'-', (char)optopt, '\0'};

	usage_error("bad option", strncmp(arg, "--", 2) && optopt ? name : arg);
}

static long parse_count(const char *opt, const char *arg, long max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(arg, &end, 10);
	if (errno || end == arg || *end || v < 1 || v > max) {
		fprintf(stderr, "%s: %s wants an integer in 1..%ld, not '%s' (" USAGE ")\n", PROG,
		        opt, max, arg);
		exit(2);
	}
	return v;
}

static const char help_text[] =
	USAGE "\n\n"
	"Trains a small MLP on a generated spiral, allocating like a deep-learning\n"
	"framework, as a workload for LD_PRELOAD=libcgprobe.so.\n\n"
	"  --steps N    training steps (default 50)\n"
	"  --batch B    mini-batch size (default 64)\n"
	"  --hidden H   width of the two hidden layers (default 256)\n"
	"  --threads T  threads splitting each matmul (default 1, at most " STR(MAX_THREADS) ")\n"
	"  -h, --help   show this help\n";

static void parse_options(int argc, char **argv, struct options *o)
{
	static const struct option longopts[] = {
		{"steps", required_argument, NULL, 's'},
		{"batch", required_argument, NULL, 'b'},
		{"hidden", required_argument, NULL, 'H'},
		{"threads", required_argument, NULL, 't'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	int c;

	*o = (struct options){.steps = 50, .batch = 64, .hidden = 256, .threads = 1};
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		switch (c) {
		case 's':
			o->steps = parse_count("--steps", optarg, 1000000);
			break;
		case 'b':
			o->batch = parse_count("--batch", optarg, 65536);
			break;
		case 'H':
			o->hidden = parse_count("--hidden", optarg, 8192);
			break;
		case 't':
			o->threads = parse_count("--threads", optarg, MAX_THREADS);
			break;
		case 'h':
			fputs(help_text, stdout);
			exit(0);
		case ':':
			usage_error("missing value for", argv[optind - 1]);
		default:
			bad_option(argv[optind - 1]);
		}
	}
	if (optind < argc)
		usage_error("unexpected argument", argv[optind]);
}

int main(int argc, char **argv)
{
	struct options o;

	parse_options(argc, argv, &o);
	train(&o);
	return 0;
}
