#!/usr/bin/python3
"""tests/bench_python.py - `make bench`: the Python layer's cost per run.

usage: bench_python.py BUILD_DIR [RUNS]

Compiles tests/fixtures/vad.onnx as tests/fixtures/ort/index.json's 'vad'
case, then times gear 0 (512 samples) on the same fixed-seed inputs both
ways, in alternating blocks so both see the same machine: the C API
(BUILD_DIR/bench_run -s, which times gearrt_run alone and writes its
inputs as .npy), gearrt's Session.run(feeds) from this interpreter
(outputs returned as fresh arrays, as by default) and the onnxruntime
shaped InferenceSession.run(None, feeds) over it.  Prints each median
and their differences: what `import gearrt` adds per run.
"""
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

import gearrt

BLOCKS = 10


def main():
    build = sys.argv[1]
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 2000
    case = json.load(open("tests/fixtures/ort/index.json"))["vad"]
    work = os.path.join(build, "bench_py")
    os.makedirs(work, exist_ok=True)
    om = os.path.join(work, "vad")
    subprocess.run([os.path.join(build, "gearc"),
                    "--model=tests/fixtures/" + case["model"], *case["args"],
                    "--output=" + om, "-q"], check=True)
    c = subprocess.Popen([os.path.join(build, "bench_run"), "-s", om + ".om",
                          "0", work], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, text=True)
    head = json.loads(c.stdout.readline())
    if "error" in head:
        sys.exit("bench_python: " + head["error"])
    m = gearrt.Model(om + ".om")
    feeds = {i["name"]: np.load(os.path.join(work, "input_%d.npy" % k))
             for k, i in enumerate(head["inputs"])}
    s = m.session()
    s.run(feeds)
    sess = gearrt.InferenceSession(om + ".om", threads=1)
    sess.run(None, feeds)
    tc, tp, ti = [], [], []
    for _ in range(BLOCKS):
        c.stdin.write("r\n" * (runs // BLOCKS))
        c.stdin.flush()
        tc += [float(c.stdout.readline()) * 1e3 for _ in range(runs // BLOCKS)]
        for _ in range(runs // BLOCKS):
            t0 = time.perf_counter_ns()
            s.run(feeds)
            tp.append((time.perf_counter_ns() - t0) / 1e3)
        for _ in range(runs // BLOCKS):
            t0 = time.perf_counter_ns()
            sess.run(None, feeds)
            ti.append((time.perf_counter_ns() - t0) / 1e3)
    c.stdin.write("q\n")
    c.stdin.close()
    c.wait()
    mc, mp = statistics.median(tc), statistics.median(tp)
    mi = statistics.median(ti)
    print("python overhead, vad at 512 samples, %d runs each, 1 thread:"
          % len(tc))
    print("  C API gearrt_run      median %8.2f us" % mc)
    print("  gearrt Session.run    median %8.2f us" % mp)
    print("  InferenceSession.run  median %8.2f us" % mi)
    print("  added by Python       %8.2f us per run (Session.run), "
          "%.2f us (InferenceSession.run)" % (mp - mc, mi - mc))


if __name__ == "__main__":
    main()
