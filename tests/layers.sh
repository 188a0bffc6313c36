#!/bin/sh
# tests/layers.sh - the arrows between gearc's layers point one way
# (docs/architecture.md, "## The code"): cli/ -> passes/, serializer/,
# runtime/ -> compiler/ -> compiler/ops/, and no op hook tells folding
# from running.
# Prints every line that breaks a rule and exits 1; prints nothing and
# exits 0 when all hold.  Run from anywhere: tests/layers.sh [BUILD]
# (BUILD, default build: its objects show which functions compiler/
# calls, however it declares them).
cd "$(dirname "$0")/.." || exit 2
BUILD=${1:-build}
above=$(mktemp) || exit 2
trap 'rm -f "$above"' EXIT
{
	# compiler/ names nothing above it
	grep -n '#include "\(cli\|passes\|serializer\|runtime\)/' \
		compiler/*.[ch] compiler/ops/*.[ch]
	# only cli/ knows the command line, and parses its flags
	grep -n '#include "cli/' passes/*.[ch] serializer/*.[ch] runtime/*.[ch]
	grep -n '^int \(gear\|pin\)_parse(' compiler/*.c
	# the runtime specialises graphs through passes/runspec.h alone
	grep -n '\b\(graph_flatten\|memplan_graph\|infer_graph\|eval_node\|eval_graph\)(' \
		runtime/*.[ch]
	# op hooks never look at the binding: ops.c's accessors do
	grep -n 'c->bind' compiler/ops/*.c |
		grep -v '^compiler/ops/ops\.c:'
	# compiler/ calls no function defined above it (the objects of
	# today's sources: a moved file leaves a stale one behind)
	if [ -d "$BUILD/compiler" ]; then
		objs() { for c in "$@"; do echo "$BUILD/${c%.c}.o"; done; }
		objs passes/*.c serializer/*.c runtime/*.c cli/*.c |
			xargs nm --defined-only |
			awk '$2 ~ /^[TDBR]$/ { print $3 }' | sort -u > "$above"
		for o in $(objs compiler/*.c compiler/ops/*.c); do
			nm --undefined-only "$o" | awk '{ print $2 }' | sort -u |
				comm -12 - "$above" | sed "s|^|$o calls |"
		done
	fi
} | grep . && exit 1
exit 0
