// SPDX-License-Identifier: MIT
// A std::vector<Widget> that grows, each Widget with std::string members, and
// a std::string grown by appends: at -O2 the allocations come out of
// libstdc++'s templates inlined several levels deep into the program, and
// out of libstdc++ itself. The `site:` comments mark the lines the sites are.
#include <string>
#include <vector>

struct Widget {
	Widget() : name("a widget whose name is too long for the string's own buffer"), tag("w") {} // site: widget
	std::string name;
	std::string tag;
};

int main()
{
	std::vector<Widget> v;
	for (int i = 0; i < 100; i++)
		v.emplace_back(); // site: growth
	std::string s;
	for (int i = 0; i < 200; i++)
		s += "more text, "; // site: append
	return (int)(v.size() + s.size()) & 1;
}
