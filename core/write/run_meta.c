/* SPDX-License-Identifier: MIT */
/* Run metadata both writers share: run ids, timestamps, step categories. */
#include "run_meta.h"

#include <string.h>
#include <unistd.h>

#include "fmt_num.h"

/* Writes v zero-padded to at least width digits; returns the length. */
static size_t put_padded(char *p, uint64_t v, size_t width)
{
	char digits[CG_FMT_U64_MAX];
	size_t n = cg_fmt_u64(digits, v);
	size_t pad = n < width ? width - n : 0;
	memset(p, '0', pad);
	memcpy(p + pad, digits, n);
	return pad + n;
}

/*
 * Unix seconds to a proleptic Gregorian UTC date, Howard Hinnant's
 * civil_from_days (no gmtime_r: no locale or tz files).
 */
static void civil_from_days(uint64_t days, uint64_t *year, uint64_t *month, uint64_t *day)
{
	uint64_t z = days + 719468;
	uint64_t era = z / 146097;
	uint64_t doe = z - era * 146097;
	uint64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	uint64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	uint64_t mp = (5 * doy + 2) / 153;
	*day = doy - (153 * mp + 2) / 5 + 1;
	*month = mp < 10 ? mp + 3 : mp - 9;
	*year = yoe + era * 400 + (*month <= 2);
}

/* `2026-08-04T18:00:00.123Z` into buf (64 bytes); returns the length. */
size_t cg_iso8601_utc(char *buf, uint64_t unix_ns)
{
	uint64_t secs = unix_ns / 1000000000u;
	uint64_t millis = unix_ns % 1000000000u / 1000000u;
	uint64_t rem = secs % 86400;
	uint64_t year, month, day;
	size_t n = 0;

	civil_from_days(secs / 86400, &year, &month, &day);
	n += put_padded(buf + n, year, 4);
	buf[n++] = '-';
	n += put_padded(buf + n, month, 2);
	buf[n++] = '-';
	n += put_padded(buf + n, day, 2);
	buf[n++] = 'T';
	n += put_padded(buf + n, rem / 3600, 2);
	buf[n++] = ':';
	n += put_padded(buf + n, rem % 3600 / 60, 2);
	buf[n++] = ':';
	n += put_padded(buf + n, rem % 60, 2);
	buf[n++] = '.';
	n += put_padded(buf + n, millis, 3);
	buf[n++] = 'Z';
	return n;
}

/* `run-<pid>-<unix_nanos>` into buf (64 bytes); returns the length. */
size_t cg_run_id(char *buf, uint64_t unix_ns)
{
	size_t n = 0;
	memcpy(buf, "run-", 4);
	n += 4;
	n += cg_fmt_u64(buf + n, (uint64_t)getpid());
	buf[n++] = '-';
	n += cg_fmt_u64(buf + n, unix_ns);
	return n;
}

/* The format's category for a record made under a step span. */
enum cgtrace_category cg_category_for_step(enum cgtrace_step step, bool requires_grad)
{
	switch (step) {
	case CGTRACE_STEP_FORWARD:
		return CGTRACE_CAT_ACTIVATION;
	case CGTRACE_STEP_BACKWARD:
		return CGTRACE_CAT_GRADIENT;
	case CGTRACE_STEP_OPTIMIZER:
		return CGTRACE_CAT_OPTIMIZER;
	case CGTRACE_STEP_NONE:
		break;
	}
	return requires_grad ? CGTRACE_CAT_PARAMETER : CGTRACE_CAT_ACTIVATION;
}

