/* SPDX-License-Identifier: MIT */
/*
 * What a launcher (torchrun, mpirun, srun) tells each process of a job in
 * its environment: one table of the variables, each recorded as a meta tag
 * under its own name when set, and the process's rank, from the first of
 * those that give one (docs/jobs.md, "Ranks").
 */
#ifndef CG_LAUNCH_ENV_H
#define CG_LAUNCH_ENV_H

#include <stdbool.h>
#include <stdint.h>

/* fn(ctx, name, value) for each of the table's variables that is set, in the table's order. */
void cg_launch_env_each(void (*fn)(void *ctx, const char *name, const char *value), void *ctx);
/*
 * The rank the environment gives: the first of RANK, PMI_RANK,
 * OMPI_COMM_WORLD_RANK, PMIX_RANK, SLURM_PROCID set to decimal digits
 * alone (at most 9 of them, leading zeros aside); false when none is.
 */
bool cg_launch_rank(uint64_t *rank);

#endif
