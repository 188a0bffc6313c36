#!/usr/bin/python3
"""The onnx side of `make bench`: how long onnx's own shape inference takes
to do what gearc does for K gears.

usage: bench_onnx.py --model=FILE --input_shape=SPEC [--step=N]
                     [--gears=1,10,100] [--runs=N]

For each gear count K (gears step, 2 step, ..., K step, as build/bench
makes them: every -1 of --input_shape takes the gear's value) it times, K
times over, setting the inputs of the model to the gear's static shapes and
onnx.shape_inference.infer_shapes(model, data_prop=True) (data propagation
is what folds Shape -> Gather -> Concat -> Reshape targets, as gearc does).
Each run parses the model once from its bytes first, as gearc imports it
once per compile.  It prints, per K, the median over the runs as

    onnx-result gears=K median_s=SECONDS

(read by build/bench), and one comment line with the output shapes onnx
inferred at the last gear, so one can see whether it inferred everything.
"""

import statistics
import sys
import time

import onnx


def parse_args(argv):
    a = {"step": "16", "gears": "1,10,100", "runs": "3"}
    for arg in argv:
        if not arg.startswith("--") or "=" not in arg:
            sys.exit("bench_onnx.py: bad argument %r" % arg)
        k, v = arg[2:].split("=", 1)
        a[k.replace("-", "_")] = v
    for k in ("model", "input_shape"):
        if k not in a:
            sys.exit("bench_onnx.py: --%s is required" % k)
    return a


def gear_shapes(spec, value):
    """{input: [dims]} with every -1 set to value."""
    out = {}
    for entry in spec.split(";"):
        name, dims = entry.rsplit(":", 1)
        out[name] = [value if int(d) == -1 else int(d)
                     for d in dims.split(",")]
    return out


def set_shapes(model, shapes):
    for inp in model.graph.input:
        if inp.name in shapes:
            dims = inp.type.tensor_type.shape.dim
            for d, v in zip(dims, shapes[inp.name]):
                d.dim_value = v  # clears dim_param


def shape_text(vi):
    t = vi.type.tensor_type
    if not t.HasField("shape"):
        return "?"
    return "[%s]" % ",".join(str(d.dim_value) if d.HasField("dim_value")
                             else (d.dim_param or "?")
                             for d in t.shape.dim)


def run(data, spec, step, k):
    """One run for k gears: seconds, and the last inferred model."""
    t0 = time.perf_counter()
    model = onnx.load_model_from_string(data)
    inferred = None
    for g in range(1, k + 1):
        set_shapes(model, gear_shapes(spec, step * g))
        inferred = onnx.shape_inference.infer_shapes(model, data_prop=True)
    return time.perf_counter() - t0, inferred


def main():
    a = parse_args(sys.argv[1:])
    with open(a["model"], "rb") as f:
        data = f.read()
    step, runs = int(a["step"]), int(a["runs"])
    for k in (int(v) for v in a["gears"].split(",")):
        times = []
        for _ in range(runs):
            secs, inferred = run(data, a["input_shape"], step, k)
            times.append(secs)
        outs = " ".join("%s %s" % (o.name, shape_text(o))
                        for o in inferred.graph.output)
        print("# onnx %d gear%s: outputs at the last gear: %s" %
              (k, "" if k == 1 else "s", outs))
        print("onnx-result gears=%d median_s=%.6f" %
              (k, statistics.median(times)))
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
