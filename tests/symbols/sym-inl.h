/* SPDX-License-Identifier: MIT */
/*
 * Two levels of inline functions in a file of their own, for sym-target.c:
 * deep_outer -> inl_mid -> inl_leaf -> take, the two inlined, so one
 * return address stands for three frames in two files. Included after
 * take() and the line variables are declared.
 */
#ifndef SYM_INL_H
#define SYM_INL_H

static inline __attribute__((always_inline)) int inl_leaf(void)
{
	line_take_in_leaf = __LINE__ + 1;
	int id = take();
	__asm__ volatile("" ::: "memory");
	return id;
}

static inline __attribute__((always_inline)) int inl_mid(void)
{
	line_leaf_in_mid = __LINE__ + 1;
	int id = inl_leaf();
	__asm__ volatile("" ::: "memory");
	return id;
}

#endif
