/* SPDX-License-Identifier: MIT */
/*
 * An MPI program for the test of a job that mpirun launches
 * (tests/test-job-mpi.py): each rank allocates, joins an allreduce and
 * says "PID rank R size S sum N", so that the test can match each rank
 * to its trace by pid.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int rank, size, one = 1, sum = 0;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	char *p = malloc(100000 + (size_t)rank);
	if (!p)
		MPI_Abort(MPI_COMM_WORLD, 99);
	memset(p, 1, 100000 + (size_t)rank);
	MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	printf("%d rank %d size %d sum %d\n", (int)getpid(), rank, size, sum);
	fflush(stdout);
	free(p);
	MPI_Finalize();
	return 0;
}
