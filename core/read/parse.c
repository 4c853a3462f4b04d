/* SPDX-License-Identifier: MIT */
/* The parser state both parsers use: scratch arena, scanner, the reference parser's tree. */
#include "parse.h"

#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

void cg_parse_init(struct cg_parse *p)
{
	memset(p, 0, sizeof(*p));
	cg_arena_init(&p->arena);
	cg_json_scan_init(&p->scan);
}

void cg_parse_fini(struct cg_parse *p)
{
	cJSON_Delete(p->tree);
	cg_arena_fini(&p->arena);
	cg_json_scan_fini(&p->scan);
	free(p->masked);
	memset(p, 0, sizeof(*p));
}
