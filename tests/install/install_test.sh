#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# `meson install` into a DESTDIR, then the installed files used as a user would:
# the binary's --version, check and report on the installed demo recording, the
# man page rendered by man(1), and the bash completion driven through its function
# (commands, option values, options read from the installed binary's --help).
#
#   install_test.sh BUILD_DIR
set -u

build=$1
fail() { echo "FAIL: $*" >&2; exit 1; }

dest=$(mktemp -d "${TMPDIR:-/tmp}/mmscope-install.XXXXXX") || fail "mktemp"
trap 'rm -rf "$dest"' EXIT
meson install -C "$build" --no-rebuild --quiet --destdir "$dest" >"$dest.log" 2>&1 ||
	{ cat "$dest.log"; rm -f "$dest.log"; fail "meson install failed"; }
rm -f "$dest.log"
prefix=$(meson introspect "$build" --buildoptions |
	python3 -c 'import json,sys; print([o["value"] for o in json.load(sys.stdin) if o["name"] == "prefix"][0])')
root=$dest$prefix
bin=$root/bin/mmscope
for f in bin/mmscope share/man/man1/mmscope.1 share/bash-completion/completions/mmscope \
	 share/zsh/site-functions/_mmscope share/doc/mmscope/examples/demo.mmscope; do
	[ -f "$root/$f" ] || fail "not installed: $prefix/$f"
done
[ -x "$bin" ] || fail "$bin is not executable"

v=$("$bin" --version) || fail "--version exited $?"
[[ $v =~ ^mmscope\ [0-9]+\.[0-9]+\.[0-9]+$ ]] || fail "--version printed '$v'"
echo "ok: $v"

# check: every metric has a row; as root, the lock source is available on this kernel.
out=$("$bin" check 2>&1); rc=$?
[ $rc = 0 ] || fail "check exited $rc: $out"
for m in 'lock contention' 'mmap_lock' 'VMA split/merge' 'try_to_unmap batches'; do
	grep -q "^$m " <<<"$out" || fail "check has no '$m' row: $out"
done
if [ "$(id -u)" = 0 ]; then
	grep -Eq '^lock contention +(bpf|perf) +available' <<<"$out" ||
		fail "check as root shows no available lock source: $out"
fi
echo "ok: check"

demo=$root/share/doc/mmscope/examples/demo.mmscope
out=$("$bin" report "$demo" --by lock -E 5 2>&1) || fail "report of the installed demo exited $?: $out"
grep -q 'mmap_lock (' <<<"$out" || fail "report of the demo shows no mmap_lock row: $out"
json=$("$bin" report "$demo" --by lock --json) || fail "report --json exited $?"
python3 -c 'import json,sys; d=json.load(sys.stdin); assert d' <<<"$json" || fail "report --json is not JSON"
echo "ok: report of the installed demo"

page=$(MANWIDTH=100 man -l "$root/share/man/man1/mmscope.1" 2>&1) || fail "man -l failed: $page"
grep -q 'ENVIRONMENT' <<<"$page" && grep -q 'mmscope' <<<"$page" || fail "man page renders wrong: $page"
echo "ok: man page"

# The completion, as bash calls it: COMP_WORDS/COMP_CWORD in, COMPREPLY out.
complete_words() {	# WORD... (the last one is being completed)
	bash --norc --noprofile -c '
		. "$1"; shift
		COMP_WORDS=("$@"); COMP_CWORD=$(( $# - 1 ))
		_mmscope
		printf "%s\n" "${COMPREPLY[@]}"' _ \
		"$root/share/bash-completion/completions/mmscope" "$@"
}
got=$(complete_words "$bin" rep | tr '\n' ' ')
[ "$got" = "report replay " ] || fail "completing 'rep' gave: $got"
got=$(complete_words "$bin" report --by c | tr '\n' ' ')
[ "$got" = "caller cgroup " ] || fail "completing '--by c' gave: $got"
got=$(complete_words "$bin" report --js)
[ "$got" = --json ] || fail "completing '--js' (from --help) gave: $got"
got=$(complete_words "$bin" record --mmap-h)
grep -qx -- --mmap-hold <<<"$got" && grep -qx -- --mmap-hold-sample <<<"$got" ||
	fail "completing '--mmap-h' gave: $got"
echo "ok: bash completion"
if command -v zsh >/dev/null; then
	zsh -n "$root/share/zsh/site-functions/_mmscope" || fail "zsh completion does not parse"
	echo "ok: zsh completion parses"
fi
echo "install: all checks passed"
