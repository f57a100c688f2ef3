# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# The TUI tests' view of their private tmux server (socket name in $sock):
# send keys, read the screen back, wait until it shows something.

keys() { tmux -L "$sock" send-keys "$@"; }
cap() { tmux -L "$sock" capture-pane -p 2>/dev/null; }

# wait_for REGEX SECONDS: until the screen matches.
wait_for() {
	local re=$1 t=$(($2 * 10))

	while [ "$t" -gt 0 ]; do
		cap | grep -Eq -- "$re" && return 0
		sleep 0.1
		t=$((t - 1))
	done
	return 1
}
