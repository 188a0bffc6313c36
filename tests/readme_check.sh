#!/bin/bash
# tests/readme_check.sh BUILD - runs every shell example of README.md
# against the built tree, so that none rots: `make check` runs it
# (make readme-check).
#
# A shell example is a fenced block marked ```sh.  In a block with
# prompts, the commands are the lines after "$ " (and the lines a
# trailing backslash continues); the other lines are what they print,
# not checked.  A block without prompts is all commands.  The blocks run
# in README order, in one shell each, in one scratch directory: an
# example may use what an earlier one wrote (demo.om).  gearc is
# BUILD/gearc (on PATH), python3 is $PYTHON (default /usr/bin/python3,
# whose numpy and onnx the Makefile installs; with $PY_PRELOAD, those
# libraries preloaded: a sanitizer build's), the Python module
# BUILD/python.  The files
# README names that a user would have are the test fixtures:
#
#   cnn.onnx   tests/fixtures/bench_cnn.onnx   (a ResNet-style CNN)
#   det.onnx, rec.onnx, det_nms.onnx           the fixtures of that name
#   multi.onnx tests/fixtures/three_inputs.onnx
#   batch8.npy, w100.npy                        random float32 inputs
#                                               [8,3,32,32], [1,3,48,100]
#
# and tests/ and build/ are links to the tree's.  An example that fails
# prints its block's line in README.md, the command and what it said,
# and the script exits 1.  Blocks that must not run here (installing,
# make targets) are not marked sh.
set -u
build=$(cd "${1:-build}" && pwd) || exit 1
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d /tmp/gearc-readme-XXXXXX)
trap 'rm -rf "$work"' EXIT

python=${PYTHON:-/usr/bin/python3}
mkdir "$work/.bin"
ln -s "$build/gearc" "$work/.bin/gearc"
if [ -n "${PY_PRELOAD:-}" ]; then
	# a sanitizer build's module: ASan first in the interpreter (as
	# make python-check runs it)
	printf '#!/bin/sh\nLD_PRELOAD="%s" ASAN_OPTIONS=detect_leaks=0:allocator_may_return_null=1 exec "%s" "$@"\n' \
		"$PY_PRELOAD" "$python" > "$work/.bin/python3"
	chmod +x "$work/.bin/python3"
else
	ln -s "$python" "$work/.bin/python3"
fi
ln -s "$root/tests" "$work/tests"
ln -s "$build" "$work/build"
for m in det rec det_nms; do ln -s "$root/tests/fixtures/$m.onnx" "$work/"; done
ln -s "$root/tests/fixtures/bench_cnn.onnx" "$work/cnn.onnx"
ln -s "$root/tests/fixtures/three_inputs.onnx" "$work/multi.onnx"
"$python" - "$work" <<'EOF' || exit 1
import sys, numpy as np
r = np.random.default_rng(0)
np.save(sys.argv[1] + "/batch8.npy", r.random((8, 3, 32, 32), np.float32))
np.save(sys.argv[1] + "/w100.npy", r.random((1, 3, 48, 100), np.float32))
EOF

# Writes each sh block's commands to $work/blocks/N.sh, its README line
# to $work/blocks/N.line.
mkdir "$work/blocks"
awk -v dir="$work/blocks" '
/^```sh[ \t]*$/ { n++; start = NR; inblk = 1; nl = 0; next }
inblk && /^```/ { inblk = 0; emit(); next }
inblk { line[++nl] = $0 }
function emit(   i, prompts, cont, f) {
	f = dir "/" sprintf("%03d", n)
	print start > (f ".line")
	for (i = 1; i <= nl; i++) if (line[i] ~ /^\$ /) prompts = 1
	cont = 0
	for (i = 1; i <= nl; i++) {
		if (!prompts) { print line[i] > (f ".sh"); continue }
		if (line[i] ~ /^\$ /) { print substr(line[i], 3) > (f ".sh"); cont = line[i] ~ /\\$/ }
		else if (cont) { print line[i] > (f ".sh"); cont = line[i] ~ /\\$/ }
	}
	close(f ".sh"); close(f ".line")
}' "$root/README.md"

fail=0 count=0
for f in "$work"/blocks/*.sh; do
	count=$((count + 1))
	out=$(cd "$work" && PATH="$work/.bin:$PATH" PYTHONPATH="$build/python" \
		bash -e -o pipefail "$f" 2>&1)
	if [ $? -ne 0 ]; then
		echo "readme-check: README.md:$(cat "${f%.sh}.line"): the example failed:"
		sed 's/^/  $ /' "$f"
		echo "$out" | tail -n 5 | sed 's/^/  | /'
		fail=1
	fi
done
if [ $count -eq 0 ]; then
	echo "readme-check: README.md has no \`\`\`sh example"
	exit 1
fi
[ $fail -eq 0 ] && echo "readme-check: the $count shell examples of README.md run"
exit $fail
