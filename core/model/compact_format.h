/* SPDX-License-Identifier: MIT */
/*
 * The compact encoding's numbers (docs/compact-format.md), for its encoder
 * and its decoder alike: the page is the definition, this is its table.
 */
#ifndef CG_COMPACT_FORMAT_H
#define CG_COMPACT_FORMAT_H

#define CG_CF_MAGIC "\x89" "CGTRACE"
#define CG_CF_MAGIC_LEN 8
#define CG_CF_VERSION 1u
#define CG_CF_HEADER_LEN 16       /* magic, version:u32, flags:u32 */
/* Header flags bit 0: memory records' timestamps never decrease in file order. */
#define CG_CF_FLAG_IN_ORDER 0x1u
#define CG_CF_BLOCK_HEADER_LEN 16 /* type:u8 zero[3] payload_len:u32 raw_len:u32 crc:u32 */
#define CG_CF_BLOCK_ZSTD 0x5a     /* 'Z': one zstd frame */
#define CG_CF_BLOCK_STORED 0x52   /* 'R': the raw bytes as they are */
/* Stack blocks: STACK and TREE items only, their ids' range first:u64 last:u64 before the bytes. */
#define CG_CF_BLOCK_STACKS_ZSTD 0x53   /* 'S' */
#define CG_CF_BLOCK_STACKS_STORED 0x73 /* 's' */
#define CG_CF_STACKS_HEAD_LEN 16
#define CG_CF_RAW_MAX (64u << 20)
#define CG_CF_PAYLOAD_SLACK 65536u /* payload_len <= raw_len + this */
#define CG_CF_HISTORY 4096u        /* the memory records of a block a ref may name */
#define CG_CF_BLOCK_THREADS 32u    /* the THREAD items of a block THREAD_AGAIN may name */

enum cg_cf_op {
	CG_CF_OP_STRING = 0x01,
	CG_CF_OP_THREAD = 0x02,
	CG_CF_OP_TEXT = 0x03,
	CG_CF_OP_CLASS = 0x05,
	CG_CF_OP_STACK = 0x06,  /* docs/stacks.md */
	CG_CF_OP_MODULE = 0x07, /* docs/stacks.md */
	CG_CF_OP_TREE = 0x08,   /* docs/stacks.md: stacks on a parent stack */
	CG_CF_OP_SPAN_START = 0x10,
	CG_CF_OP_SPAN_END = 0x11,
	CG_CF_OP_DEVICE_MEMORY = 0x12,
	CG_CF_OP_THREAD_AGAIN = 0x20, /* 0x20-0x3f: the block's THREAD item number op - 0x20 */
	CG_CF_OP_SKIP_FIRST = 0x40, /* 0x40-0x7f: len:varint, skipped whole */
	CG_CF_OP_MEMORY = 0x80,     /* 0x80-0xff: 1 F X C C C C C */
};

#define CG_CF_MEM_FREE 0x40  /* F */
#define CG_CF_MEM_EXT 0x20   /* X: an extension area follows */
#define CG_CF_MEM_CLASS 0x1f /* CCCCC; this value: the class id follows as a varint */
#define CG_CF_EXT_STACK 1u   /* extension key: the allocation's stack id */
#define CG_CF_EXT_PREEXISTING 2u /* extension key: 1 for a block live before recording began */

#define CG_CF_CLASS_MANAGED 1u
#define CG_CF_CLASS_VMM 2u

#define CG_CF_SPAN_MEASURED 1u
#define CG_CF_DEVMEM_RESERVED 1u
#define CG_CF_DEVMEM_OOM 2u
#define CG_CF_EXT 0x80u /* SPAN_START and DEVICE_MEMORY flags: an extension area follows */

#endif
