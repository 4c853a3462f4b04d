// SPDX-License-Identifier: MIT
// A chain of the program's own inline functions across two files (cxx-chain.h):
// build -> shapes::make_row -> shapes::grab -> new[], the two inlined, so one
// return address stands for three frames, each at its own call line.
#include "cxx-chain.h"

__attribute__((noinline)) static char *build(std::size_t n)
{
	char *p = shapes::make_row(n); // call: build
	__asm__ volatile("" : : "r"(p) : "memory");
	return p;
}

int main()
{
	char *p = build(3131);
	delete[] p;
	return 0;
}
