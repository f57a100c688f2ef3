#!/usr/bin/env bash
# Builds the mmscope guest kernel from Debian's linux-source-6.12 (or 6.1),
# with or without the tracepoint patches in kernel/patches/VERSION, and caches
# the result outside the tree keyed by everything that goes into it (source
# tarball, patches, config fragments, the recipe's version).  Prints the cached
# kernel's directory (bzImage, config, build.log) on stdout.
#
#   kernel/build.sh [--version 6.12 | 6.1] [--patched | --unpatched]
#                   [--cached-only] [--deps-only]
#
# --cached-only prints a kernel that is already cached and builds
# none (exit 77 if there is none).  The config is allnoconfig + kernel/mmscope.config, then
# kernel/mmscope-VERSION.config if there is one (no ACPI, no IPv6):
# about a quarter of defconfig's objects.  Debug info is there for BTF only,
# so it is built without variable tracking (-fno-var-tracking: locations,
# which BTF does not use, cost a fifth of the compile time).  Both variants are built in the same scratch
# paths through ccache, so the second one recompiles only what the patches
# touch (a minute or two instead of all of it).  Exit status: 0 built or
# cached, 1 failed, 77 cannot build on this machine (no source package, no
# compiler, not root to install them).
#
# Environment: MMSCOPE_CACHE (default /var/cache/mmscope), JOBS (default
# nproc), NICE (default 19: other people share the cores).
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cache=${MMSCOPE_CACHE:-/var/cache/mmscope}/kernel
variant=patched
version=6.12
deps_only=0
cached_only=0
usage() {
	echo "usage: $0 [--version 6.12 | 6.1] [--patched | --unpatched] [--cached-only]" \
		"[--deps-only]" >&2
	exit 2
}
while [ $# -gt 0 ]; do
	case $1 in
	--patched) variant=patched ;;
	--unpatched) variant=unpatched ;;
	--version) [ $# -ge 2 ] || usage; version=$2; shift ;;
	--version=*) version=${1#--version=} ;;
	--cached-only) cached_only=1 ;;
	--deps-only) deps_only=1 ;;
	*) usage ;;
	esac
	shift
done
case $version in
6.1 | 6.12) ;;
*) echo "kernel/build: no recipe for version $version (6.1 and 6.12 have one)" >&2; exit 2 ;;
esac

say() { echo "kernel/build: $*" >&2; }
die() { say "$*"; exit 1; }
skip() { say "$*"; exit 77; }

# Packages: the compiler and kbuild's tools, pahole for BTF, ccache, qemu to boot it.
pkgs=(gcc make bc bison flex libssl-dev libelf-dev dwarves cpio ccache xz-utils
      "linux-source-$version" qemu-system-x86 e2fsprogs)
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
		missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	[ "$(id -u)" = 0 ] || skip "missing ${missing[*]} and not root to install them" \
		"(run: sudo apt-get install ${missing[*]})"
	say "installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -q >/dev/null 2>&1 || skip "apt-get update failed: no package mirror?"
	apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null 2>&1 ||
		skip "apt-get install ${missing[*]} failed"
fi
[ $deps_only = 1 ] && exit 0

tarball=/usr/src/linux-source-$version.tar.xz
[ -f "$tarball" ] || skip "no $tarball (apt-get install linux-source-$version)"
mkdir -p "$cache" || die "cannot create $cache (set MMSCOPE_CACHE to a writable directory)"

patches=()
if [ $variant = patched ]; then
	pdir=$top/kernel/patches/$version
	[ -f "$pdir/series" ] || die "no kernel/patches/$version/series"
	while read -r p; do
		case $p in ''|'#'*) continue ;; esac
		patches+=("$pdir/$p")
	done <"$pdir/series"
fi
fragments=("$top/kernel/mmscope.config")
[ -f "$top/kernel/mmscope-$version.config" ] && fragments+=("$top/kernel/mmscope-$version.config")

# The key: what the kernel is made of.  The tarball by size and mtime (hashing
# 140 MB each run costs seconds), the config fragments' settings (not their
# comments), the patches by content, and recipe_version: bump it when a change
# below alters the kernel this script makes.  6.1's key is computed as it was
# before there were versions, so kernels already cached are still found.
recipe_version=2
key=$( {
	echo "variant=$variant recipe=$recipe_version"
	[ "$version" = 6.1 ] || echo "version=$version"
	stat -c 'tarball %s %Y' "$tarball"
	grep -hE '^(CONFIG_|# CONFIG_.* is not set)' "${fragments[@]}"
	for p in "${patches[@]}"; do cat "$p"; done
} | sha256sum | cut -c1-16)
name=$variant
[ "$version" = 6.1 ] || name=$version-$variant
out=$cache/$name-$key
if [ -f "$out/bzImage" ] && [ -f "$out/done" ]; then
	echo "$out"
	exit 0
fi
[ $cached_only = 0 ] || skip "no cached $version $variant kernel ($out)"

# The source tree, the objects and ccache take about 3 GiB: say so rather than
# fail halfway through with ENOSPC.
need_kib=$((4 * 1024 * 1024))
avail_kib=$(df -Pk "$cache" | awk 'NR == 2 { print $4 }')
if [ -n "$avail_kib" ] && [ "$avail_kib" -lt $need_kib ]; then
	skip "building a kernel needs about 4 GiB free in $cache, $((avail_kib / 1024)) MiB are" \
		"(free some, or set MMSCOPE_CACHE to a bigger filesystem)"
fi

# One build at a time on this machine: two would share the scratch tree.
exec 9>"$cache/build.lock"
flock 9
if [ -f "$out/bzImage" ] && [ -f "$out/done" ]; then
	echo "$out"
	exit 0
fi

pristine=$cache/linux-source-$version
if [ ! -f "$pristine/.mmscope-extracted" ]; then
	say "extracting $tarball into $cache"
	rm -rf "$pristine"
	tar -C "$cache" -xf "$tarball" || die "cannot extract $tarball into $cache"
	touch "$pristine/.mmscope-extracted"
fi

# Fixed scratch paths for both variants: ccache then finds the same compiler
# command lines and hits for every file the patches do not touch.
src=$cache/work/linux
obj=$cache/work/obj
rm -rf "$cache/work"
mkdir -p "$cache/work" "$obj"
# Hard links: cheap.  patch(1) writes a new file and renames it over the
# link, so the pristine tree is never modified through them.
cp -al "$pristine" "$src"
for p in "${patches[@]}"; do
	patch -s -p1 -d "$src" --no-backup-if-mismatch <"$p" ||
		die "$(basename "$p") does not apply to linux-source-$version"
done

export CCACHE_DIR=$cache/ccache
export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-6G}
export CCACHE_NOHASHDIR=1
export CCACHE_SLOPPINESS=time_macros,include_file_mtime,include_file_ctime
# The build date would make every vmlinux differ; keep it fixed.
export KBUILD_BUILD_TIMESTAMP='2024-01-01' KBUILD_BUILD_USER=mmscope KBUILD_BUILD_HOST=mmscope
jobs=${JOBS:-$(nproc)}
log=$cache/work/build.log
# Depend mode: a miss costs no extra preprocessor run (kbuild passes -MMD).
export CCACHE_DEPEND=1
mk() { nice -n "${NICE:-19}" make -C "$src" O="$obj" CC="ccache gcc" KCFLAGS=-fno-var-tracking \
	-j"$jobs" "$@"; }

start=$(date +%s)
say "building $version $variant kernel ($key, ${#patches[@]} patches) with -j$jobs; log in $log"
{
	mk allnoconfig
	"$src/scripts/kconfig/merge_config.sh" -m -O "$obj" "$obj/.config" "${fragments[@]}"
	mk olddefconfig
} >"$log" 2>&1 || { tail -n 30 "$log" >&2; die "configuring the kernel failed"; }

# merge_config only warns when Kconfig drops an option; a missing one here
# would make every later check fail in a confusing way.
bad=$(grep -hE '^CONFIG_[A-Z0-9_]+=y' "${fragments[@]}" | while read -r l; do
	grep -qx "$l" "$obj/.config" || echo "${l%=y}"
done)
[ -z "$bad" ] || die "the config lost: $bad (a dependency is missing; see $log)"

mk bzImage >>"$log" 2>&1 || { grep -E 'error|Error' "$log" | head -n 20 >&2; tail -n 20 "$log" >&2
	die "building the kernel failed (full log: $log)"; }

rm -rf "$out.tmp"
mkdir -p "$out.tmp"
cp "$obj/arch/x86/boot/bzImage" "$obj/.config" "$obj/System.map" "$log" "$out.tmp/"
mv "$out.tmp/.config" "$out.tmp/config"
for p in "${patches[@]}"; do cp "$p" "$out.tmp/"; done
echo "built in $(( $(date +%s) - start )) s" >"$out.tmp/done"
rm -rf "$out"
mv "$out.tmp" "$out"
say "$version $variant kernel built in $(( $(date +%s) - start )) s: $out"
echo "$out"
