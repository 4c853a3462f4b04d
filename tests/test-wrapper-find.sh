#!/bin/sh
# How each copy of the cgprobe wrapper finds its probe and reader: the copy
# meson generates in BUILDDIR/scripts, the installed copy (DESTDIR install,
# then a moved prefix), the source tree's scripts/cgprobe beside several
# builds, and the refusal of a probe built with AddressSanitizer.
#   test-wrapper-find.sh SOURCE_WRAPPER BUILDDIR MESON
# CGPROBE_LIB is unset throughout: finding the library is what is tested.
set -u
# shellcheck source=tests/lib/sh-check.sh
. "$(dirname "$0")/lib/sh-check.sh"
need_args 3 "test-wrapper-find.sh SOURCE_WRAPPER BUILDDIR MESON" "$@"
src_wrapper=$(abs "$1")
build=$(abs "$2")
meson=$3
lib=$build/preload/libcgprobe.so
skip_unless_built "$lib"
if [ ! -x "$build/scripts/cgprobe" ]; then
	echo "FAIL: the build generated no $build/scripts/cgprobe"
	exit 1
fi
unset CGPROBE_LIB CGPROBE_OUTPUT CGPROBE_MIN_BYTES CGPROBE_ONLY CGPROBE_FOLLOW CGPROBE_FLUSH_MS CGPROBE_TAGS

make_tmp
mkdir "$tmp/work" "$tmp/decoy" || exit 1
cd "$tmp/work" || exit 1
# A cgtrace on PATH that is not the build's: a wrapper must prefer its own.
printf '#!/bin/sh\necho DECOY-CGTRACE\n' >"$tmp/decoy/cgtrace"
chmod +x "$tmp/decoy/cgtrace"
base_path=$tmp/decoy:/usr/bin:/bin


# run WRAPPER ARGS...: stdout and stderr to $tmp/out and $tmp/err.
run() {
	w=$1
	shift
	rm -f "$tmp"/work/*.cgt
	PATH=$base_path "$w" "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
	st=$?
}

# expect_found NAME LIB: the run succeeded, PROGRAM had LIB preloaded, a
# trace was written and summarised by the wrapper's own reader.
expect_found() {
	if [ "$st" -ne 0 ]; then
		ko "$1: exit status $st"
	elif [ "$(sed -n 1p "$tmp/out")" != "$2" ]; then
		ko "$1: LD_PRELOAD '$(sed -n 1p "$tmp/out")', expected '$2'"
	elif ! ls "$tmp"/work/*.cgt >/dev/null 2>&1; then
		ko "$1: no trace written"
	elif grep -q 'DECOY-CGTRACE\|cgtrace not found\|unreadable' "$tmp/err"; then
		ko "$1: summary not from the build's own cgtrace"
	elif ! grep -q '^cgprobe: more: .*cgtrace memory ' "$tmp/err"; then
		ko "$1: no summary"
	else
		ok
	fi
}

real_lib=$(cd -P "${lib%/*}" && pwd -P)/libcgprobe.so
# shellcheck disable=SC2016 # expanded by the program run, not here
show_preload='echo "$LD_PRELOAD"'

# The copy generated in the build folder, whatever the folder is called.
run "$build/scripts/cgprobe" sh -c "$show_preload"
expect_found "BUILDDIR/scripts/cgprobe" "$real_lib"
# Through a symbolic link elsewhere, as a user's ~/bin/cgprobe would be.
ln -s "$build/scripts/cgprobe" "$tmp/cgprobe-link"
run "$tmp/cgprobe-link" sh -c "$show_preload"
expect_found "a link to BUILDDIR/scripts/cgprobe" "$real_lib"

# Installed with DESTDIR, then the whole prefix moved elsewhere.
dest=$tmp/dest
if "$meson" install -C "$build" --no-rebuild --destdir "$dest" >"$tmp/install.log" 2>&1; then
	inst=$(find "$dest" -path '*/bin/cgprobe' | head -n 1)
	inst_lib=$(find "$dest" -name libcgprobe.so | head -n 1)
	if [ -n "$inst" ] && [ -n "$inst_lib" ]; then
		run "$inst" sh -c "$show_preload"
		expect_found "installed under DESTDIR" "$(cd -P "${inst_lib%/*}" && pwd -P)/libcgprobe.so"
		prefix=${inst%/bin/cgprobe}
		mv "$prefix" "$tmp/moved"
		rel=${inst_lib#"$prefix"/}
		run "$tmp/moved/bin/cgprobe" sh -c "$show_preload"
		expect_found "installed, prefix moved" "$(cd -P "$tmp/moved/${rel%/*}" && pwd -P)/libcgprobe.so"
	else
		ko "meson install put no bin/cgprobe or libcgprobe.so under $dest"
	fi
else
	sed 's/^/  install: /' "$tmp/install.log"
	ko "meson install --destdir failed"
fi

# The source tree's wrapper: build/ beside scripts/, never a sanitizer
# build beside it. A tree of links to the real outputs stands for it.
tree=$tmp/tree
mkdir -p "$tree/scripts" "$tree/preload" "$tree/build/preload" "$tree/build/cgtrace" \
	"$tree/build-asan/preload" "$tree/build-asan/cgtrace"
: >"$tree/meson.build"
cp "$src_wrapper" "$tree/scripts/cgprobe"
ln -s "$lib" "$tree/build-asan/preload/libcgprobe.so"
ln -s "$build/cgtrace/cgtrace" "$tree/build-asan/cgtrace/cgtrace"
run "$tree/scripts/cgprobe" true
if [ "$st" -eq 1 ] && grep -q 'cannot find libcgprobe.so in .*/build/preload' "$tmp/err"; then
	ok
else
	ko "source tree with only build-asan/: status $st, expected 1 and build/ named"
fi
cp "$lib" "$tree/build/preload/libcgprobe.so"
ln -s "$build/cgtrace/cgtrace" "$tree/build/cgtrace/cgtrace"
run "$tree/scripts/cgprobe" sh -c "$show_preload"
expect_found "source tree's scripts/cgprobe" "$(cd -P "$tree/build/preload" && pwd -P)/libcgprobe.so"

# A probe built with AddressSanitizer is refused with the reason, and
# PROGRAM is not run.
printf 'int cg_test_asan(void) { return 0; }\n' >asan.c
if command -v readelf >/dev/null 2>&1 &&
	gcc -shared -fPIC -fsanitize=address -o libasan-probe.so asan.c 2>/dev/null &&
	readelf -dW libasan-probe.so | grep -q 'libasan'; then
	rm -f ran
	CGPROBE_LIB=$tmp/work/libasan-probe.so run "$build/scripts/cgprobe" sh -c ': >ran'
	if [ "$st" -eq 1 ] && grep -q 'AddressSanitizer' "$tmp/err" && [ ! -f ran ]; then
		ok
	else
		ko "ASan-built probe: status $st"
	fi
else
	skip "ASan-built probe (gcc -fsanitize=address or readelf missing)"
fi

finish
