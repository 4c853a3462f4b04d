/* SPDX-License-Identifier: MIT */
/*
 * cuda/ as the probe's device source (probe.h): the names its records
 * carry, op names, "cuda:N" and the GPU UUID as nvidia-smi prints it,
 * handed to the engine, which knows no CUDA names.
 */
#include <errno.h>
#include <string.h>

#include "driver.h"
#include "ops.h"
#include "probe.h"

#define CG_CUDA_OP_NAME(name) #name,
static const char *const op_names[] = {CG_CUDA_OPS(CG_CUDA_OP_NAME)};
#undef CG_CUDA_OP_NAME

/* "cuda:N": only a per-process number; the UUID names the physical GPU. */
static size_t device_name(char *out, size_t cap, uint8_t device)
{
	char digits[4];
	size_t n = 0;
	do
		digits[n++] = (char)('0' + device % 10);
	while ((device /= 10) && n < sizeof(digits));
	if (cap < 5 + n + 1)
		return 0;
	memcpy(out, "cuda:", 5);
	for (size_t i = 0; i < n; i++)
		out[5 + i] = digits[n - 1 - i];
	out[5 + n] = '\0';
	return 5 + n;
}

/* As nvidia-smi shows it: GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx. */
static void uuid_text(char out[48], const unsigned char u[16])
{
	static const char digits[] = "0123456789abcdef";
	size_t n = 0;
	memcpy(out, "GPU-", 4);
	n = 4;
	for (int i = 0; i < 16; i++) {
		if (i == 4 || i == 6 || i == 8 || i == 10)
			out[n++] = '-';
		out[n++] = digits[u[i] >> 4];
		out[n++] = digits[u[i] & 15];
	}
	out[n] = '\0';
}

static int identify(uint8_t device, struct cg_device_identity *id)
{
	struct cg_cuda_identity c;
	if (cg_drv_identity(device, &c) < 0)
		return -ENODEV;
	uuid_text(id->uuid, c.uuid);
	_Static_assert(sizeof(id->name) == sizeof(c.name), "device names fit");
	memcpy(id->name, c.name, sizeof(id->name));
	id->name[sizeof(id->name) - 1] = '\0';
	id->total_bytes = c.total_bytes;
	return 0;
}

static const struct cg_device_source cuda = {
	.op_names = op_names,
	.op_count = CG_CU_OP_COUNT,
	.device_name = device_name,
	.identify = identify,
};

_Static_assert(sizeof(op_names) / sizeof(op_names[0]) == CG_CU_OP_COUNT, "one name per op");

/* Ahead of the first session, which preload/init.c starts from the next constructor (102). */
__attribute__((constructor(101))) static void cg_cuda_register(void)
{
	cg_probe_register_device_source(&cuda);
}
