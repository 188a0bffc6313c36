#!/bin/sh
# tests/scope_sums.sh - checksums of the .om files --gear_scope makes.
#
#   tests/scope_sums.sh [BUILD] > sums.txt
#
# tests/om_sums.sh compiles the scope fixtures without --gear_scope; this
# compiles them with it (auto, and the prefixes the tests use), and every
# fixture of tests/fixtures/expected.json with --gear_scope=auto (mostly
# the full-clone fallback).  One "sha256  name" line per .om, or
# "error  name" for a compile that fails, sorted.
set -eu
BUILD=${1:-build}
GEARC=$BUILD/gearc
FIX=tests/fixtures
OUT=$(mktemp -d /tmp/scope_sums.XXXXXX)
trap 'rm -rf "$OUT"' EXIT

om() { # name model args...
	name=$1 model=$2
	shift 2
	$GEARC --model="$FIX/$model" "$@" --output="$OUT/$name" -q \
		2>/dev/null || echo "error  $name.om" >> "$OUT/errors"
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
            print("%s.%d" % (k, i), v["model"],
                  " ".join(shlex.quote(a) for a in v["args"]),
                  shlex.quote("--gear_scope=" + s))
' "$FIX/scope_expected.json" "$FIX/expected.json"
}

scope_cases | while read -r name model args; do
	eval "om \"\$name\" \"\$model\" $args"
done
om demo.0 demo_cnn.onnx --input_shape=x:-1,3,32,32 \
	--dynamic_batch_size=1,4,8 --gear_scope=auto
(cd "$OUT" && find . -name '*.om' | sort | xargs sha256sum
 cat errors 2>/dev/null || true) | sort -k2
