#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Captures every view of the live TUI as text for the README (docs/screens),
# under a real workload: mmap_churn (mmap_lock, i_mmap_rwsem of a shared
# file) and pageout_loop (reclaim).  Needs root.  Not a test: run by hand.
#
#   screens.sh MMSCOPE MMAP_CHURN PAGEOUT_LOOP OUTDIR [COLS ROWS]
set -eu

mmscope=$(realpath "$1")
churn=$(realpath "$2")
pageout=$(realpath "$3")
out=$4
cols=${5:-120}
rows=${6:-36}
sock=mms-screens-$$
work=$(mktemp -d /var/tmp/mmscope-screens.XXXXXX)

cleanup() {
	tmux -L "$sock" kill-server 2>/dev/null || true
	kill $(jobs -p) 2>/dev/null || true
	wait 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT

mkdir -p "$out"
"$churn" -t 4 -P 2 -f "$work/shared" -s 40 >/dev/null 2>&1 &
"$pageout" -f "$work/pageout" -m 2048 -s 40 >/dev/null 2>&1 &
tmux -L "$sock" -f /dev/null new-session -d -x "$cols" -y "$rows" \
	"env TERM=screen $mmscope --mmap-hold"
tmux -L "$sock" set -g status off
sleep 8	# a few intervals, so sparklines have a shape

shot() {	# shot KEYS NAME
	tmux -L "$sock" send-keys "$1"
	sleep 1.2
	tmux -L "$sock" capture-pane -p >"$out/$2.txt"
}

shot 1 locks
shot Enter detail
shot Escape locks-back
shot 3 callers
shot 4 tasks
shot 5 mmap_lock
shot 6 vma
shot 7 rmap
shot 8 timeline
shot 1 locks-live
tmux -L "$sock" send-keys Space
shot t paused
tmux -L "$sock" send-keys Space
shot '?' help
tmux -L "$sock" send-keys q
sleep 1
# The same TUI over a recording of the same workload.
"$mmscope" record -o "$work/r.mms" --duration 5 2>/dev/null
tmux -L "$sock" kill-server 2>/dev/null || true
tmux -L "$sock" -f /dev/null new-session -d -x "$cols" -y "$rows" \
	"env TERM=screen $mmscope replay $work/r.mms"
tmux -L "$sock" set -g status off
sleep 1
tmux -L "$sock" send-keys End
shot Left replay
tmux -L "$sock" send-keys q
rm -f "$out/locks-back.txt" "$out/locks-live.txt"
echo "screens in $out"
