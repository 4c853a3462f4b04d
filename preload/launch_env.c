/* SPDX-License-Identifier: MIT */
#include "launch_env.h"

#include <stddef.h>
#include <stdlib.h>

/*
 * rank: where the variable stands among those that give the process's
 * rank in its whole job (1 first), 0 for the others: a local rank, a
 * size, a run's id. torchrun's come first, then the process managers'
 * (MPICH's and Intel MPI's PMI, Open MPI's own, PMIx), then Slurm's.
 */
static const struct var {
	const char *name;
	uint8_t rank;
} vars[] = {
	{"RANK", 1},
	{"LOCAL_RANK", 0},
	{"WORLD_SIZE", 0},
	{"SLURM_PROCID", 5},
	{"OMPI_COMM_WORLD_RANK", 3},
	/* torchrun's (torch.distributed.elastic) others */
	{"GROUP_RANK", 0},
	{"LOCAL_WORLD_SIZE", 0},
	{"TORCHELASTIC_RESTART_COUNT", 0},
	{"TORCHELASTIC_RUN_ID", 0},
	/* Open MPI's */
	{"OMPI_COMM_WORLD_SIZE", 0},
	{"OMPI_COMM_WORLD_LOCAL_RANK", 0},
	{"OMPI_COMM_WORLD_LOCAL_SIZE", 0},
	/* PMI (MPICH, Intel MPI) and PMIx */
	{"PMI_RANK", 2},
	{"PMI_SIZE", 0},
	{"PMIX_RANK", 4},
	/* Slurm's */
	{"SLURM_LOCALID", 0},
	{"SLURM_NTASKS", 0},
	{"SLURM_JOB_ID", 0},
};

#define N_VARS (sizeof(vars) / sizeof(vars[0]))
#define RANK_DIGITS_MAX 9

void cg_launch_env_each(void (*fn)(void *ctx, const char *name, const char *value), void *ctx)
{
	for (size_t i = 0; i < N_VARS; i++) {
		const char *v = getenv(vars[i].name);
		if (v)
			fn(ctx, vars[i].name, v);
	}
}

/* Decimal digits alone, a number of at most RANK_DIGITS_MAX digits once leading zeros go. */
static bool parse_rank(const char *s, uint64_t *out)
{
	uint64_t v = 0;
	size_t digits = 0;
	if (!*s)
		return false;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return false;
		v = v * 10 + (uint64_t)(*s - '0');
		digits += v != 0;
		if (digits > RANK_DIGITS_MAX)
			return false;
	}
	*out = v;
	return true;
}

bool cg_launch_rank(uint64_t *rank)
{
	for (uint8_t order = 1;; order++) {
		const struct var *found = NULL;
		for (size_t i = 0; i < N_VARS && !found; i++)
			if (vars[i].rank == order)
				found = &vars[i];
		if (!found)
			return false;
		const char *v = getenv(found->name);
		if (v && parse_rank(v, rank))
			return true;
	}
}
