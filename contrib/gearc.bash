# contrib/gearc.bash - bash completion for gearc(1): its commands, each
# command's flags, the values some flags take, and the files each takes
# (.onnx for --model and inspect, .om for dump, verify, run and export,
# folders for compare).  `make install` puts it in
# $(PREFIX)/share/bash-completion/completions/gearc, where bash-completion
# finds it; or `source contrib/gearc.bash`.
#
# The flag lists below are checked against `gearc help COMMAND` by
# tests/test_cli_small.c: a flag the help lists and these lack fails the
# tests.  Flags are spelled as the help spells them (gearc takes '-' and
# '_' alike); a flag that takes a value ends in '='.

_gearc_commands="compile inspect dump verify run export compare help"

_gearc_flags_compile="--model= --output= --check --input_shape= --input_value=
 --dynamic_batch_size= --dynamic_image_size= --dynamic_dims= --input_format=
 --gear_scope= --framework= --hybrid --compile_hybrid_mode= --no-fuse
 --keep-fp16 --static_model_ops_lower_limit= -j --jobs= --dump-after= -q
 --quiet -h --help --out_nodes= --output_type= --input_fp16_nodes=
 --insert_op_conf= --mean_values= --scale_values= --reverse_input_channels
 --source_layout= --source_type= --log= --mode= --om= --json=
 --precision_mode= --keep_dtype= --modify_mixlist="
_gearc_flags_inspect="--format= -q --quiet -h --help"
_gearc_flags_dump="--format= -g --graph= -s --summary --detail -q --quiet -h
 --help"
_gearc_flags_verify="-v --verbose -q --quiet -h --help"
_gearc_flags_run="-i --input -o --output-dir= --random-inputs --gear= --bench=
 --warmup= --duration= --json= --print --save-inputs= -t --threads=
 --pad-batch --no-gears --dump-tensors= --max-isa= -q --quiet -h --help"
_gearc_flags_export="--gear= --output= --external-data --fp16-weights -q --quiet -h --help"
_gearc_flags_compare="--rtol= --atol= -q --quiet -h --help"
_gearc_flags_help=""

# The values of flag $1 that begin with $2.
_gearc_values()
{
	local flag=${1//_/-} cur=$2
	case $flag in
	--format) COMPREPLY=($(compgen -W "text json dot" -- "$cur")) ;;
	--input-format) COMPREPLY=($(compgen -W "NCHW NHWC ND" -- "$cur")) ;;
	--gear) COMPREPLY=($(compgen -W "all 0 1 2 3" -- "$cur")) ;;
	--gear-scope) COMPREPLY=($(compgen -W "auto" -- "$cur")) ;;
	--framework) COMPREPLY=($(compgen -W "5" -- "$cur")) ;;
	--log) COMPREPLY=($(compgen -W "debug info warning error null" \
			      -- "$cur")) ;;
	--mode) COMPREPLY=($(compgen -W "0 1 3" -- "$cur")) ;;
	--precision-mode)
		COMPREPLY=($(compgen -W "force_fp32 must_keep_origin_dtype
			allow_fp32_to_bf16 allow_mix_precision_bf16
			allow_fp32_to_fp16 allow_mix_precision
			allow_mix_precision_fp16 force_fp16" -- "$cur")) ;;
	--compile-hybrid-mode) COMPREPLY=($(compgen -W "0 1" -- "$cur")) ;;
	--dump-after)
		COMPREPLY=($(compgen -W "widen-fp16 qdq hybrid gear-scope
			gear-clone specialise fuse symbols partition
			hybrid-root gear-root memplan" -- "$cur")) ;;
	--model) COMPREPLY=($(compgen -f -X '!*.onnx' -- "$cur")
			    $(compgen -d -- "$cur")) ;;
	--output-dir | --dump-tensors | --save-inputs)
		COMPREPLY=($(compgen -d -- "$cur")) ;;
	--max-isa) COMPREPLY=($(compgen -W "avx512 avx2 avx sse41 baseline" \
			    -- "$cur")) ;;
	--output | --json | --input | -i) COMPREPLY=($(compgen -f -- "$cur")) ;;
	*) COMPREPLY=() ;;
	esac
}

_gearc()
{
	local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
	local cmd="" i
	COMPREPLY=()
	for ((i = 1; i < COMP_CWORD; i++)); do
		case " $_gearc_commands " in
		*" ${COMP_WORDS[i]} "*) cmd=${COMP_WORDS[i]}; break ;;
		esac
		[[ ${COMP_WORDS[i]} == -* ]] && { cmd=compile; break; }
	done
	# bash splits --flag=value at '=': "--flag" "=" "value"
	if [[ $cur == "=" ]]; then
		_gearc_values "$prev" ""
		return
	fi
	if [[ $prev == "=" && $COMP_CWORD -ge 2 ]]; then
		_gearc_values "${COMP_WORDS[COMP_CWORD-2]}" "$cur"
		return
	fi
	case $prev in
	-j | -t | -g | --input | -i | --graph)
		_gearc_values "$prev" "$cur"
		return ;;
	esac
	if [[ -z $cmd ]]; then
		if [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W "--help --version
				$_gearc_flags_compile" -- "$cur"))
		else
			COMPREPLY=($(compgen -W "$_gearc_commands" -- "$cur"))
		fi
	elif [[ $cur == -* ]]; then
		local flags=_gearc_flags_$cmd
		COMPREPLY=($(compgen -W "${!flags}" -- "$cur"))
	else
		case $cmd in
		dump | verify | run | export)
			COMPREPLY=($(compgen -f -X '!*.om' -- "$cur")
				    $(compgen -d -- "$cur")) ;;
		inspect)
			COMPREPLY=($(compgen -f -X '!*.onnx' -- "$cur")
				    $(compgen -d -- "$cur")) ;;
		compare) COMPREPLY=($(compgen -d -- "$cur")) ;;
		help) COMPREPLY=($(compgen -W "$_gearc_commands" -- "$cur")) ;;
		esac
	fi
	# no space after a flag that takes a value: --model=<TAB> goes on
	[[ ${COMPREPLY[0]} == *= ]] && compopt -o nospace 2>/dev/null
	return 0
}

complete -F _gearc gearc
