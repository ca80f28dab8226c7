# fatbuild.bash: bash completion for fatbuild and archprobe, installed as
# share/bash-completion/completions/fatbuild and .../archprobe (bash-completion loads it on the
# first Tab after either name; or source it from ~/.bashrc).
# The commands, options and what each option takes are read from the tools' own --help when Tab
# is pressed, as the man pages are (fatbuild/cmake/manpages.sh): a new option needs nothing here.
# Only the values of a few options, which the help gives in prose, are listed below; the test
# tests/manpages.sh checks that each is in the help it belongs to.

# _fb_parse TEXT: the options of a help text into _fb_opts (words) and _fb_arg[OPT] (its argument,
# e.g. DIR, FILE, table|json). Option lines are "  -x, --long ARG  text"; the synopsis adds
# "[--opt ARG]" items that the lines do not have.
_fb_parse()
{
	local line term g opt arg i
	local -a groups
	_fb_opts=
	_fb_arg=()
	while IFS= read -r line; do
		if [[ $line =~ ^\ {1,4}-[-A-Za-z] ]]; then
			term=${line#"${line%%[! ]*}"}
			term=${term%%  *}
			groups=()
			while [[ $term == *", "* ]]; do
				groups+=("${term%%, *}")
				term=${term#*, }
			done
			groups+=("$term")
			arg=
			# "-o, --output OUT": an option without an argument before one with it shares it.
			for ((i = ${#groups[@]} - 1; i >= 0; i--)); do
				g=${groups[i]}
				opt=${g%% *}
				[[ $g == *" "* ]] && arg=${g#* }
				[[ $opt == *"[="* ]] && { arg=; opt=${opt%%\[*}; }
				[[ " $_fb_opts " == *" $opt "* ]] || _fb_opts+=" $opt"
				[[ -n $arg ]] && _fb_arg[$opt]=$arg
			done
		elif [[ $line == usage:* || $line =~ ^\ +\[ ]]; then
			while [[ $line =~ \[(-[-A-Za-z0-9]+)(\ ([^] []+))?\] ]]; do
				opt=${BASH_REMATCH[1]}
				[[ " $_fb_opts " == *" $opt "* ]] || _fb_opts+=" $opt"
				[[ -n ${BASH_REMATCH[3]} && -z ${_fb_arg[$opt]-} ]] && _fb_arg[$opt]=${BASH_REMATCH[3]}
				line=${line/"${BASH_REMATCH[0]}"/}
			done
		fi
	done <<<"$1"
}

# _fb_reply COMPGEN-ARGS...: compgen's words into COMPREPLY, one per line (names with spaces).
_fb_reply()
{
	mapfile -t COMPREPLY < <(compgen "$@")
}

# _fb_values TOOL CMD OPT ARG CUR: the completions of OPT's value (ARG is its help argument).
_fb_values()
{
	local tool=$1 cmd=$2 opt=$3 arg=$4 cur=$5 words=
	case $tool:$cmd:$opt in
	archprobe::--format) words="table json cmake torch nvcc clang list nvrtc bazel nvptx-arch nvcc-query" ;;
	fatbuild:flags:--format | fatbuild::--format) words="nvcc torch cmake list clang bazel nvrtc json" ;;
	fatbuild:*:--backend) words="auto nvrtc nvcc" ;;
	fatbuild:compile:--compress) words="default none zstd lz4" ;;
	fatbuild:*:--compress) words="none zstd lz4" ;;
	*:--arch-list | *:--fallback) words="native auto all all-major Turing Ampere Ada Hopper Blackwell" ;;
	fatbuild:check:--arch) words="native" ;;
	esac
	if [[ -z $words && $arg == *"|"* ]]; then
		words=${arg//|/ }
	fi
	if [[ -n $words ]]; then
		_fb_reply -W "$words" -- "$cur"
		return
	fi
	case $arg in
	DIR | DIR/*) _fb_reply -d -- "$cur" ;;
	CMD | PY) _fb_reply -c -- "$cur" ;;
	FILE* | OUT* | IN* | PATH*) _fb_reply -f -- "$cur" ;;
	*) COMPREPLY=() ;;
	esac
	[[ $arg == DIR* || $arg == FILE* || $arg == OUT* || $arg == IN* || $arg == PATH* ]] &&
		compopt -o filenames 2>/dev/null
	return 0
}

# _fb_complete TOOL CMD OPTS-HELP: completes COMP_WORDS[COMP_CWORD] as an option, an option's
# value or an operand of CMD, with the options of the help text OPTS-HELP.
_fb_complete()
{
	local tool=$1 cmd=$2 cur=${COMP_WORDS[COMP_CWORD]} prev='' opt=''
	local -A _fb_arg
	local _fb_opts
	((COMP_CWORD > 0)) && prev=${COMP_WORDS[COMP_CWORD - 1]}
	_fb_parse "$3"
	# --opt=value: readline splits at '=' (COMP_WORDBREAKS).
	if [[ $cur == "=" ]]; then
		opt=$prev cur=
	elif [[ $prev == "=" ]] && ((COMP_CWORD > 1)); then
		opt=${COMP_WORDS[COMP_CWORD - 2]}
	elif [[ -n $prev && -n ${_fb_arg[$prev]-} ]]; then
		opt=$prev
	fi
	if [[ -n $opt ]]; then
		_fb_values "$tool" "$cmd" "$opt" "${_fb_arg[$opt]-}" "$cur"
	elif [[ $cur == -* ]]; then
		_fb_reply -W "$_fb_opts" -- "$cur"
	elif [[ $tool == fatbuild && $cmd == cache ]]; then
		_fb_reply -W "stats clear dir" -- "$cur"
	elif [[ $tool == fatbuild && $cmd != env ]]; then
		_fb_reply -f -- "$cur"
		compopt -o filenames 2>/dev/null
	fi
	return 0
}

_fatbuild()
{
	local exe=${COMP_WORDS[0]/#\~/$HOME} i w cmd='' cmds help
	COMPREPLY=()
	help=$("$exe" --help 2>/dev/null) || return 0
	cmds=$(sed -n '/^Commands:$/,/^$/s/^  \([a-z][a-z0-9-]*\) .*/\1/p' <<<"$help")
	# The command is the first word that is not an option or an option's value.
	for ((i = 1; i < COMP_CWORD; i++)); do
		w=${COMP_WORDS[i]}
		case $w in
		--nvrtc) ((i++)) ;;
		--nvrtc=*) ;;
		-*) break ;;
		*) [[ " $cmds " == *[[:space:]]"$w"[[:space:]]* ]] && cmd=$w
			break ;;
		esac
	done
	if [[ -n $cmd ]]; then
		_fb_complete fatbuild "$cmd" "$("$exe" "$cmd" --help 2>/dev/null)"
	elif ((i == COMP_CWORD)) && [[ ${COMP_WORDS[COMP_CWORD]} != -* ]]; then
		# The first word: a command, else (fatbuild -o x.so k.cu) a source of a build.
		_fb_reply -W "$cmds" -- "${COMP_WORDS[COMP_CWORD]}"
		if ((${#COMPREPLY[@]} == 0)); then
			_fb_reply -f -- "${COMP_WORDS[COMP_CWORD]}"
			compopt -o filenames 2>/dev/null
		fi
	else
		# No command: the options of flags and build, which these words stand for.
		_fb_complete fatbuild "" "$help
$("$exe" flags --help 2>/dev/null)
$("$exe" build --help 2>/dev/null)"
	fi
	return 0
}

_archprobe()
{
	COMPREPLY=()
	_fb_complete archprobe "" "$("${COMP_WORDS[0]/#\~/$HOME}" --help 2>/dev/null)"
}

complete -F _fatbuild fatbuild
complete -F _archprobe archprobe
