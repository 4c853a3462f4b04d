/* SPDX-License-Identifier: MIT */
/*
 * The error codes of the fake CUDA libraries (fake-cuda.c, fake-cudart.c)
 * with their texts. Where the driver and the runtime have a code for the
 * same failure, CUDA gives both the same text: FAKE_SHARED_ERRORS names the
 * pair and the text once; each fake adds the codes only it has.
 */
#ifndef FAKE_ERRORS_H
#define FAKE_ERRORS_H

#include <stddef.h>

/* X(driver code, runtime code, text) */
#define FAKE_SHARED_ERRORS(X)                                                                      \
	X(CUDA_SUCCESS, cudaSuccess, "no error")                                                   \
	X(CUDA_ERROR_INVALID_VALUE, cudaErrorInvalidValue, "invalid argument")                     \
	X(CUDA_ERROR_OUT_OF_MEMORY, cudaErrorMemoryAllocation, "out of memory")                    \
	X(CUDA_ERROR_NOT_INITIALIZED, cudaErrorInitializationError, "initialization error")        \
	X(CUDA_ERROR_NO_DEVICE, cudaErrorNoDevice, "no CUDA-capable device is detected")           \
	X(CUDA_ERROR_INVALID_DEVICE, cudaErrorInvalidDevice, "invalid device ordinal")             \
	X(CUDA_ERROR_INVALID_HANDLE, cudaErrorInvalidResourceHandle, "invalid resource handle")    \
	X(CUDA_ERROR_NOT_FOUND, cudaErrorSymbolNotFound, "named symbol not found")                 \
	X(CUDA_ERROR_NOT_SUPPORTED, cudaErrorNotSupported, "operation not supported")              \
	X(CUDA_ERROR_UNKNOWN, cudaErrorUnknown, "unknown error")

struct fake_error {
	int code;
	const char *name;
	const char *text;
};

/* A row of one fake's table: the name is the code's own spelling. */
#define FAKE_ERROR(code, text)                                                                     \
	{                                                                                          \
		(code), #code, (text)                                                              \
	}

/* The row of code in table (n rows), or NULL. */
static inline const struct fake_error *fake_error_find(const struct fake_error *table, size_t n,
                                                       int code)
{
	for (size_t i = 0; i < n; i++)
		if (table[i].code == code)
			return &table[i];
	return NULL;
}

#endif
