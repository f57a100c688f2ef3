#!/usr/bin/env bash
# Installs everything mmscope needs on Debian 12, builds libperf from Debian's
# linux-source-6.1 into a cache outside the tree, then configures and builds mmscope.
# Safe to run again: packages, libperf and the build directory are reused.
#
#   scripts/setup.sh [BUILD_DIR] [extra meson options...]
#
# Environment: MMSCOPE_CACHE (default /var/cache/mmscope) holds the libperf build.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$top/build}
[ $# -gt 0 ] && shift
cache=${MMSCOPE_CACHE:-/var/cache/mmscope}
lp_prefix=$cache/libperf-6.1

die() { echo "setup: $*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || die "needs root to install packages (run: sudo $0)"

pkgs=(meson ninja-build pkg-config gcc make clang llvm bpftool libbpf-dev libelf-dev
      zlib1g-dev libzstd-dev libtraceevent-dev libncurses-dev libcmocka-dev gdb
      linux-source-6.1 xz-utils zstd tmux stress-ng linux-perf util-linux procps
      prometheus-node-exporter prometheus curl)
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	echo "setup: installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -q >/dev/null || die "apt-get update failed"
	apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null ||
		die "apt-get install ${missing[*]} failed"
fi

# libperf: Debian ships no package; build the 6.1 one, statically, once.
if [ ! -f "$lp_prefix/lib/libperf.a" ] || [ ! -f "$lp_prefix/lib/libapi.a" ] ||
   [ ! -f "$lp_prefix/lib/pkgconfig/libperf.pc" ]; then
	tarball=$(ls /usr/src/linux-source-6.1.tar.* 2>/dev/null | head -n1)
	[ -n "$tarball" ] || die "no /usr/src/linux-source-6.1.tar.* (apt-get install linux-source-6.1)"
	echo "setup: building libperf from $tarball into $lp_prefix"
	work=$(mktemp -d "${TMPDIR:-/tmp}/mmscope-libperf.XXXXXX")
	trap 'rm -rf "$work"' EXIT
	s=linux-source-6.1
	tar -C "$work" -xf "$tarball" --wildcards "$s/tools/lib/perf" "$s/tools/lib/api" \
		"$s/tools/lib/zalloc.c" "$s/tools/lib/str_error_r.c" "$s/tools/include" \
		"$s/tools/arch" "$s/tools/build" "$s/tools/scripts"
	mkdir -p "$lp_prefix"
	make -s -C "$work/$s/tools/lib/perf" -j"$(nproc)" prefix="$lp_prefix" \
		libdir_relative=lib EXTRA_CFLAGS="-O2 -fPIC" install_lib install_headers \
		>"$work/build.log" 2>&1 || { tail -n 30 "$work/build.log" >&2; die "libperf build failed"; }
	install -m 0644 "$work/$s/tools/lib/api/libapi.a" "$lp_prefix/lib/"
	# Static only: the program must not depend on a library outside the system paths.
	rm -f "$lp_prefix"/lib/libperf.so*
	mkdir -p "$lp_prefix/lib/pkgconfig"
	cat >"$lp_prefix/lib/pkgconfig/libperf.pc" <<PC
prefix=$lp_prefix
libdir=\${prefix}/lib
includedir=\${prefix}/include

Name: libperf
Description: perf library (built from linux-source-6.1 by mmscope's setup)
Version: 6.1
Libs: -L\${libdir} -lperf -lapi
Cflags: -I\${includedir}
PC
fi

# tracefs is where the collectors read event formats; mount it if the system did not.
if [ ! -d /sys/kernel/tracing/events ]; then
	mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null || true
fi

if [ ! -f "$build/build.ninja" ]; then
	meson setup "$build" "$top" -Dpkg_config_path="$lp_prefix/lib/pkgconfig" "$@" >/dev/null ||
		die "meson setup failed (see $build/meson-logs/meson-log.txt)"
fi
ninja -C "$build" >/dev/null || { ninja -C "$build"; die "build failed"; }
echo "setup: built $build/mmscope"
