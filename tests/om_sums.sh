#!/bin/sh
# tests/om_sums.sh - checksums of every .om the tests and `make bench` make.
#
#   tests/om_sums.sh [BUILD] > sums.txt
#
# Compiles each fixture of tests/fixtures/{expected,scope_expected}.json
# with its arguments, the demo, the fuse fixtures, bench_cnn, bench_tf,
# bench_rec at 100 gears (with and without --hybrid and --no-fuse), and
# every plain backend test (build/conformance -r -w); prints one
# "sha256  name" line per .om, sorted.  A refactor that must not change
# the compiler's output is checked by diffing two runs:
#
#   tests/om_sums.sh > /tmp/before; ...; tests/om_sums.sh | diff /tmp/before -
#
# Needs /usr/bin/python3 only to read the two JSON files.  With
# OM_SUMS_KEEP=DIR (a directory not there yet) the .om files are left in
# DIR, for tests/dump_sums.sh.
set -eu
BUILD=${1:-build}
GEARC=$BUILD/gearc
FIX=tests/fixtures
if [ -n "${OM_SUMS_KEEP:-}" ]; then
	OUT=$OM_SUMS_KEEP
	mkdir "$OUT"
else
	OUT=$(mktemp -d /tmp/om_sums.XXXXXX)
	trap 'rm -rf "$OUT"' EXIT
fi

om() { # name model args...
	name=$1 model=$2
	shift 2
	$GEARC --model="$FIX/$model" "$@" --output="$OUT/$name" -q
}

# The same for a compile that may fail (a --gear_scope prefix that does
# not fit the model): the failure is part of the result.
om_or_error() {
	name=$1
	om "$@" 2>/dev/null || echo "error  ./$name.om" >> "$OUT/errors"
}

scope_cases() {
	/usr/bin/python3 -c '
import json, shlex, sys
scopes = {"scope_cls": ["auto", "/backbone/", "/stem/,/backbone/"],
          "scope_enc": ["auto", "/encoder/", "/encoder/,/pool/"],
          "scope_two": ["auto", "/a/", "/b/", "/a/,/b/"],
          "scope_cycle": ["auto", "/s/"]}
for f in sys.argv[1:]:
    for k, v in sorted(json.load(open(f)).items()):
        for i, s in enumerate(scopes.get(k, ["auto"])):
            print("scope/%s.%d" % (k, i), v["model"],
                  " ".join(shlex.quote(a) for a in v["args"]),
                  shlex.quote("--gear_scope=" + s))
' "$FIX/scope_expected.json" "$FIX/expected.json"
}

for json in expected.json scope_expected.json; do
	/usr/bin/python3 -c '
import json, shlex, sys
for k, v in sorted(json.load(open(sys.argv[1])).items()):
    print(k, v["model"], " ".join(shlex.quote(a) for a in v["args"]))
' "$FIX/$json" | while read -r name model args; do
		eval "om \"\$name\" \"\$model\" $args"
		eval "om \"\$name.hybrid\" \"\$model\" $args --hybrid"
		eval "om \"\$name.nofuse\" \"\$model\" $args --no-fuse"
	done
done

om demo demo_cnn.onnx --input_shape=x:-1,3,32,32 --dynamic_batch_size=1,4,8
om bench_cnn bench_cnn.onnx --input_shape=x:-1,3,224,224 \
	--dynamic_batch_size=1,8
om bench_tf bench_tf.onnx --input_shape=x:1,-1,128 --dynamic_dims="64;128;256"
dims=$(seq -s';' 32 32 3200)
om bench_rec100 bench_rec.onnx --input_shape=x:1,3,48,-1 --dynamic_dims="$dims"
for f in "$FIX"/fuse/*.onnx; do
	n=$(basename "$f" .onnx)
	om "fuse_$n" "fuse/$n.onnx" --input_shape=x:-1,"$(/usr/bin/python3 -c '
import onnx, sys
m = onnx.load(sys.argv[1])
d = m.graph.input[0].type.tensor_type.shape.dim[1:]
print(",".join(str(x.dim_value) for x in d))' "$f")" --dynamic_batch_size=1,2
done

mkdir "$OUT/scope"
scope_cases | while read -r name model args; do
	eval "om_or_error \"\$name\" \"\$model\" $args"
done
om scope/demo.0 demo_cnn.onnx --input_shape=x:-1,3,32,32 \
	--dynamic_batch_size=1,4,8 --gear_scope=auto

mkdir "$OUT/backend"
$BUILD/conformance -r -w "$OUT/backend" \
	/usr/share/libonnx-testdata/data >/dev/null
(cd "$OUT" && find . -name '*.om' | xargs sha256sum
 cat errors 2>/dev/null || true) | sort -k2
