#!/bin/sh
# tests/dump_sums.sh - checksums of every way `gearc dump` shows every .om.
#
#   tests/dump_sums.sh [BUILD [GEARC]] > sums.txt
#
# The .om files: those tests/om_sums.sh makes (its list, with BUILD's
# gearc and conformance), the other fixtures that compile (statically,
# or with the arguments the tests give them, --input_value's pinned
# inputs and a kept-full --gear_scope among them), and the backend node
# tests with control flow, sequences and optionals (If, Loop, Scan,
# Sequence*, Optional*) that compile statically.  GEARC (default
# BUILD/gearc) dumps each as text, text --summary, json, json --summary,
# json --detail, dot, and --graph=NAME (its last graph's name) as text,
# json and dot; one "sha256  file mode" line per dump (stdout, stderr
# and exit status), sorted.  A refactor of the dump that must not change
# what it prints is checked by diffing two runs:
#
#   tests/dump_sums.sh build /tmp/gearc_before > /tmp/before
#   tests/dump_sums.sh | diff /tmp/before -
#
# Needs /usr/bin/python3 (and python3-onnx, for om_sums.sh).
set -eu
BUILD=${1:-build}
GEARC=${2:-$BUILD/gearc}
GEARC=$(cd "$(dirname "$GEARC")" && pwd)/$(basename "$GEARC")
FIX=tests/fixtures
NODE=/usr/share/libonnx-testdata/data/node
OUT=$(mktemp -d /tmp/dump_sums.XXXXXX)
trap 'rm -rf "$OUT"' EXIT

OM_SUMS_KEEP=$OUT/om tests/om_sums.sh "$BUILD" >/dev/null
mkdir "$OUT/om/extra" "$OUT/om/node"

# A compile that may fail: only what compiles is dumped.
om() { # name model args...
	name=$1 model=$2
	shift 2
	$BUILD/gearc --model="$model" "$@" --output="$OUT/om/$name" -q \
		2>/dev/null || true
}

for n in deep_nesting_64 fast_chain fast_cnn fast_direct fast_mm fast_rnn \
	odd_names typed_data unordered; do
	om "extra/$n" "$FIX/$n.onnx"
done
om extra/det_nms "$FIX/det_nms.onnx" --input_shape=x:1,3,-1,-1 \
	--dynamic_image_size="320,320;640,480"
for n in external_data:16 external_misaligned:4 if_subgraph:4 loop_body:4 \
	mlp:64; do
	om "extra/${n%:*}" "$FIX/${n%:*}.onnx" --input_shape=x:-1,"${n#*:}" \
		--dynamic_batch_size=1,2
done
om extra/mlp.scope "$FIX/mlp.onnx" --input_shape=x:-1,64 \
	--dynamic_batch_size=1,2 --gear_scope=auto
om extra/three_inputs "$FIX/three_inputs.onnx" \
	--input_shape="tokens:-1,-1;mask:-1,-1;image:1,3,224,224" \
	--dynamic_dims="1,32,1,32;4,64,4,64"
om extra/two_inputs "$FIX/two_inputs.onnx" \
	--input_shape="a:-1,3,-1,-1;b:-1,3,-1,-1" \
	--dynamic_dims="1,8,8,1,8,8;2,16,16,2,16,16"
om extra/vad_sr "$FIX/vad_sr.onnx" --input_shape="x:1,-1;sr:" \
	--dynamic_dims="256;512"
om extra/vad_sr.hybrid "$FIX/vad_sr.onnx" --input_shape="x:1,-1;sr:" \
	--dynamic_dims="256;512" --hybrid
om extra/vad_sr.pinned "$FIX/vad_sr.onnx" --input_shape="x:1,-1;sr:" \
	--dynamic_dims="256;512" --input_value="sr:16000; mode: 1,0"
for d in "$NODE"/test_if* "$NODE"/test_loop* "$NODE"/test_scan* \
	"$NODE"/test_sequence* "$NODE"/test_identity_sequence \
	"$NODE"/test_optional*; do
	om "node/$(basename "$d")" "$d/model.onnx"
done

# The dumps run in the directory of the .om files, so that the paths
# they show do not depend on where it is.
cd "$OUT/om"

# The name of f's last graph.
last_graph() {
	$GEARC dump --format=json "$1" | /usr/bin/python3 -c '
import json, sys
print(json.load(sys.stdin)["graphs"][-1]["name"])'
}

sum() { # file mode args...
	f=$1 mode=$2
	shift 2
	s=$({ $GEARC dump "$@" "$f" 2>&1 && echo "exit 0" ||
		echo "exit $?"; } |
		sha256sum | cut -d' ' -f1)
	echo "$s  $f $mode"
}

find . -name '*.om' | sort | while read -r f; do
	sum "$f" text
	sum "$f" text-summary --summary
	sum "$f" json --format=json
	sum "$f" json-summary --format=json --summary
	sum "$f" json-detail --format=json --detail
	sum "$f" dot --format=dot
	g=$(last_graph "$f") || g=
	sum "$f" graph-text --graph="$g"
	sum "$f" graph-json --format=json --graph="$g"
	sum "$f" graph-dot --format=dot --graph="$g"
done | sort -k2
