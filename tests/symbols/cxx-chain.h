// SPDX-License-Identifier: MIT
// The inline half of cxx-chain.cc: two levels of the program's own inline
// functions, in a namespace, in a file of their own.
#ifndef CXX_CHAIN_H
#define CXX_CHAIN_H

#include <cstddef>

namespace shapes {

inline __attribute__((always_inline)) char *grab(std::size_t n)
{
	char *p = new char[n]; // site: grab
	__asm__ volatile("" : : "r"(p) : "memory");
	return p;
}

inline __attribute__((always_inline)) char *make_row(std::size_t n)
{
	char *p = grab(n * 2); // call: make_row
	__asm__ volatile("" : : "r"(p) : "memory");
	return p;
}

} // namespace shapes

#endif
