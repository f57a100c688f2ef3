# bash completion for mmscope.  The options are read from `mmscope --help` the first
# time they are needed, so this file never lists them and cannot fall behind the binary.
_mmscope_opts=

_mmscope()
{
	local cur=${COMP_WORDS[COMP_CWORD]} prev=
	[ "$COMP_CWORD" -gt 0 ] && prev=${COMP_WORDS[COMP_CWORD - 1]}
	local cmds="report record replay info compare check export"
	local i sub=
	for ((i = 1; i < COMP_CWORD; i++)); do
		case ${COMP_WORDS[i]} in
		--) return 0 ;;	# a command line to launch: leave it to the default
		report|record|replay|info|compare|check|export) sub=${COMP_WORDS[i]}; break ;;
		esac
	done

	case $prev in
	--by) COMPREPLY=($(compgen -W "lock caller task process type stack cgroup owner" -- "$cur")); return 0 ;;
	-F|--field)
		COMPREPLY=($(compgen -W "contended wait_total wait_max wait_min avg_wait p50 p99" -- "$cur"))
		return 0 ;;
	-G|--cgroup-filter)	# cgroup v2 paths under its mount
		local r
		for r in /sys/fs/cgroup /sys/fs/cgroup/unified; do
			[ "$(stat -f -c %T "$r" 2>/dev/null)" = cgroup2fs ] || continue
			COMPREPLY=($(cd "$r" 2>/dev/null && compgen -d -- "${cur#/}" | sed 's|^|/|'))
			break
		done
		return 0 ;;
	-i|--input) COMPREPLY=($(compgen -f -- "$cur")); return 0 ;;
	--source) COMPREPLY=($(compgen -W "bpf perf" -- "$cur")); return 0 ;;
	--vma-source) COMPREPLY=($(compgen -W "tracepoint fentry inferred off" -- "$cur")); return 0 ;;
	--rmap-source) COMPREPLY=($(compgen -W "tracepoint fentry stock off" -- "$cur")); return 0 ;;
	-Y|--type-filter)
		COMPREPLY=($(compgen -W "spinlock rwlock rwlock:R rwlock:W rwsem rwsem:R rwsem:W mutex rtmutex" -- "$cur"))
		return 0 ;;
	-k|--key)
		COMPREPLY=($(compgen -W "contended wait_total wait_max wait_min avg_wait p50 p99" -- "$cur"))
		return 0 ;;
	-p|--pid) COMPREPLY=($(compgen -W "$(ls /proc 2>/dev/null | grep -E '^[0-9]+$')" -- "$cur")); return 0 ;;
	-o|--output|--perfetto) COMPREPLY=($(compgen -f -- "$cur")); return 0 ;;
	--openmetrics) COMPREPLY=($(compgen -d -- "$cur")); return 0 ;;
	-d|--delay|--interval|--duration|--window|-E|--entries|--max-stack|--stack-skip|\
	-M|--map-nr-entries|-C|--cpu|--stack-entries|--task-entries|--mmap-hold-sample|-L|--lock-filter|\
	-S|--callstack-filter|-x|--tid|--base|--new)
		return 0 ;;
	esac

	if [[ $cur == -* ]]; then
		if [ -z "$_mmscope_opts" ]; then
			_mmscope_opts=$("${COMP_WORDS[0]}" --help 2>/dev/null |
				grep -oE -- '(^|[ ,])--?[A-Za-z][A-Za-z0-9-]*' | tr -d ' ,' | sort -u)
		fi
		COMPREPLY=($(compgen -W "$_mmscope_opts" -- "$cur"))
		return 0
	fi
	case $sub in
	'') COMPREPLY=($(compgen -W "$cmds" -- "$cur")) ;;
	check|record) ;;
	*)	# report, replay, info, compare read recordings
		COMPREPLY=($(compgen -f -- "$cur")) ;;
	esac
	return 0
}
complete -o filenames -F _mmscope mmscope
