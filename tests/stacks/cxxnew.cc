// SPDX-License-Identifier: MIT
// C++ new reaches malloc through libstdc++'s operator new: 5151 bytes from cxx_site.
#define FRAME __attribute__((noinline))

FRAME char *cxx_site(unsigned long n)
{
	char *p = new char[n];
	__asm__ volatile("" : : "r"(p) : "memory");
	return p;
}

int main()
{
	char *p = cxx_site(5151);
	delete[] p;
	return 0;
}
