#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# What is not a regular file is refused at once, by every command that reads
# a recording (info, report, replay, compare) and by `report -o`: a FIFO
# (open() used to block forever waiting for a writer), a character device
# (/dev/zero never ends), a directory.  `report -o` creates its file 0600
# and, run as root under sudo, gives it to SUDO_UID like recordings.
#
#   special_files.sh MMSCOPE RECORDING
set -u

mmscope=$1
rec=$2
fail() { echo "FAIL: $*" >&2; exit 1; }
ok() { echo "ok   $*"; }

dir=$(mktemp -d /tmp/mmscope-special.XXXXXX) || fail "mktemp"
trap 'rm -rf "$dir"' EXIT
mkfifo "$dir/fifo" || fail "mkfifo"
mkdir "$dir/dir"

# refused DESC REGEX CMD...: exits 1 within 5 s with REGEX on stderr.
refused() {
	local desc=$1 re=$2 rc

	shift 2
	timeout 5 "$@" </dev/null >"$dir/out" 2>"$dir/err"
	rc=$?
	[ $rc != 124 ] || fail "$desc: still blocked after 5 s"
	[ $rc = 1 ] || fail "$desc: exit $rc, want 1 ($(cat "$dir/err"))"
	grep -qE -- "$re" "$dir/err" || fail "$desc: stderr lacks /$re/: $(cat "$dir/err")"
	ok "$desc"
}

for f in "$dir/fifo:a FIFO" "/dev/zero:a character device" "$dir/dir:a directory"; do
	path=${f%%:*} kind=${f#*:}
	msg="$path is $kind, not a recording"
	refused "info $kind" "$msg" "$mmscope" info "$path"
	refused "report $kind" "$msg" "$mmscope" report "$path"
	refused "report --json $kind" "$msg" "$mmscope" report --json "$path"
	refused "replay $kind" "$msg" "$mmscope" replay "$path"
	refused "compare $kind (base)" "$msg" "$mmscope" compare "$path" -- "$rec"
	refused "compare $kind (new)" "$msg" "$mmscope" compare "$rec" -- "$path"
	refused "report -o $kind" "$path is $kind: write the report to a regular file" \
		"$mmscope" report "$rec" -o "$path"
done
[ -p "$dir/fifo" ] && [ -d "$dir/dir" ] || fail "a refused -o changed the file"

# A new report file is 0600 whatever the umask; an existing one becomes 0600.
(umask 022 && "$mmscope" report "$rec" -o "$dir/r.txt") || fail "report -o"
[ "$(stat -c %a "$dir/r.txt")" = 600 ] || fail "report -o made $(stat -c %a "$dir/r.txt"), want 600"
echo MMS-OLD-CONTENT >"$dir/old.txt"
chmod 0644 "$dir/old.txt"
"$mmscope" report "$rec" -o "$dir/old.txt" || fail "report -o onto an existing file"
[ "$(stat -c %a "$dir/old.txt")" = 600 ] || fail "an existing -o file kept its mode"
grep -q MMS-OLD-CONTENT "$dir/old.txt" && fail "an existing -o file was not truncated"
ok "report -o: 0600, new or existing"
if [ "$(id -u)" = 0 ]; then
	SUDO_UID=65534 SUDO_GID=65534 "$mmscope" report "$rec" -o "$dir/sudo.txt" ||
		fail "report -o under sudo"
	[ "$(stat -c %u:%g "$dir/sudo.txt")" = 65534:65534 ] ||
		fail "report -o under sudo belongs to $(stat -c %u:%g "$dir/sudo.txt")"
	ok "report -o under sudo belongs to SUDO_UID, like recordings"
fi
echo "special files: all refused"
