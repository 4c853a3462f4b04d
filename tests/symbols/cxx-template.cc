// SPDX-License-Identifier: MIT
// A class template with a member function template, instantiated at -O2: its
// allocations (the objects it makes, the vector it keeps them in) are the
// template's, inlined into a function of the program. The arena is never
// freed: its allocations are the program's leaks.
#include <utility>
#include <vector>

namespace pool {

template <typename T> class Arena {
public:
	template <typename... A> T *make(A &&...a)
	{
		T *p = new T(std::forward<A>(a)...); // site: object
		items.push_back(p); // site: keep
		return p;
	}
	std::size_t size() const { return items.size(); }

private:
	std::vector<T *> items;
};

} // namespace pool

struct Point {
	Point(int x, int y) : x(x), y(y) {}
	int x, y;
};

__attribute__((noinline)) static void fill(pool::Arena<Point> &a, int n)
{
	for (int i = 0; i < n; i++)
		a.make(i, n - i); // call: fill
}

int main()
{
	auto *a = new pool::Arena<Point>; // site: arena
	fill(*a, 64);
	return (int)a->size() & 1;
}
