"""python -m gearrt FILE.om [--input NAME=FILE.npy ...] [--bench N]
[--threads N] [--output-dir DIR]: runs a .om as `gearc run` does.

Prints the path the run took ("gear K (dims D)", "dynamic graph (dims D,
rebuilt|cached)" or "static graph") and each output's name, dtype and
shape; --bench N runs N more times and prints the median and minimum,
then the latency's mean, stddev, percentiles and the throughput;
--output-dir writes DIR/NAME.npy per output (NAME's bytes other than a
letter, digit, '.', '_' or '-' as %xx; strings as numpy '<U').  Errors print one line
"gearrt: error: ..." and exit 1 (2 for a usage error).
"""
import argparse
import math
import os
import re
import sys
import time

import numpy as np

import gearrt


def parse(argv):
    p = argparse.ArgumentParser(prog="python -m gearrt",
                                description="Runs a gearc .om file.")
    p.add_argument("file", help="the .om file")
    p.add_argument("--input", "-i", action="append", default=[],
                   metavar="NAME=FILE.npy", help="an input (repeat per input)")
    p.add_argument("--bench", type=int, metavar="N",
                   help="time N more runs: median and minimum")
    p.add_argument("--threads", "-t", type=int, default=1, metavar="N",
                   help="intra-op threads")
    p.add_argument("--output-dir", "-o", metavar="DIR",
                   help="write DIR/NAME.npy per output")
    a = p.parse_args(argv)
    if a.bench is not None and a.bench < 1:
        p.error("--bench %d: expected an integer 1..1000000" % a.bench)
    if a.output_dir and not os.path.isdir(a.output_dir):
        p.error("--output-dir '%s' is not a directory" % a.output_dir)
    return a


def feeds_of(m, given):
    """The inputs from NAME=FILE.npy pairs, each input given once."""
    names = [i.name for i in m.inputs]
    feeds = {}
    for g in given:
        name, sep, path = g.partition("=")
        if not sep:
            raise gearrt.Error("--input '%s': expected NAME=PATH" % g)
        if name not in names:
            raise gearrt.Error("--input '%s': the model has no input of "
                               "that name" % g)
        try:
            feeds[name] = np.load(path, allow_pickle=False)
        except (OSError, ValueError) as e:
            raise gearrt.Error("input '%s': %s" % (name, e)) from None
    for n in names:
        if n not in feeds:
            raise gearrt.Error("input '%s' is not given (--input "
                               "%s=FILE.npy)" % (n, n))
    return feeds


def print_stats(t, wall):
    """gearc run's latency and throughput lines for the sorted times t
    (ms) of runs that took wall seconds one after another."""
    n = len(t)
    mean = sum(t) / n
    sd = math.sqrt(sum((x - mean) ** 2 for x in t) / (n - 1)) if n > 1 else 0
    rank = lambda q: t[int(math.floor(q * (n - 1) + 0.5))]
    print("latency: mean %.3f ms, stddev %.3f, min %.3f, p50 %.3f, p90 %.3f, "
          "p99 %.3f, max %.3f" % (mean, sd, t[0], rank(0.5), rank(0.9),
                                 rank(0.99), t[-1]))
    print("throughput: %.1f inferences/s (%d runs in %.3f s, after 0 warm-up "
          "runs)" % (n / wall if wall > 0 else 0, n, wall))


def path_line(m, s, feeds):
    """What the run took, worded as gearc run words it."""
    if s.last_path == "dynamic":
        dims = ",".join(str(d) for i in m.inputs
                        for d in np.shape(feeds[i.name]))
        return "dynamic graph (dims %s, %s)" % (
            dims, "rebuilt" if s.stats.last_rebuilt else "cached")
    if s.last_gear is not None:
        return "gear %d (dims %s)" % (s.last_gear, ",".join(
            str(d) for d in m.gears[s.last_gear].dims))
    return "static graph"


def gear_of(m, feeds):
    """The gear feeds select (0 for a static model), or None."""
    if not m.gears:
        return 0
    dims = [d for i in m.inputs for k, d in enumerate(np.shape(feeds[i.name]))
            if i.shape[k] is None]
    return next((g.index for g in m.gears if list(g.dims) == dims), None)


def escape(name):
    return re.sub(r"[^A-Za-z0-9._-]",
                  lambda c: "".join("%%%02x" % b for b in c.group().encode()),
                  name)


def main(argv=None):
    a = parse(argv)
    try:
        t0 = time.perf_counter()
        m = gearrt.Model(a.file)
        t_open = (time.perf_counter() - t0) * 1e3
        feeds = feeds_of(m, a.input)
        t0 = time.perf_counter()
        s = m.session(threads=a.threads)
        t_open += (time.perf_counter() - t0) * 1e3
        # the feeds' gear prepared ahead, as gearc run does
        g = gear_of(m, feeds)
        t0 = time.perf_counter()
        if g is not None:
            s.prepare([g])
        t_prepare = (time.perf_counter() - t0) * 1e3
        t0 = time.perf_counter()
        outs = s.run(feeds)
        t_first = (time.perf_counter() - t0) * 1e3
        print(path_line(m, s, feeds))
        for o in m.outputs:
            y = outs[o.name]
            print("output '%s' %s [%s]" % (o.name, o.type,
                                          ",".join(str(d) for d in y.shape)))
            if a.output_dir:  # strings as <U, as gearc run writes them
                np.save(os.path.join(a.output_dir, escape(o.name) + ".npy"),
                        y.astype(str) if o.type == "string" else y)
        if a.bench:
            t = []
            start = t0 = time.perf_counter()
            for _ in range(a.bench):
                s.run(feeds)
                t1 = time.perf_counter()
                t.append((t1 - t0) * 1e3)
                t0 = t1
            wall = t0 - start
            t.sort()
            st = s.stats
            print("bench: load %.3f ms (open %.3f, prepare %.3f, first run "
                  "%.3f), run median %.3f ms, min %.3f ms over %d runs"
                  % (t_open + t_prepare + t_first, t_open, t_prepare,
                     t_first, t[len(t) // 2], t[0], len(t)))
            print_stats(t, wall)
            if st.dynamic_runs:
                print("shape cache: %d rebuilds (last %.3f ms), %d cache "
                      "hits over %d runs" % (st.rebuilds, st.last_rebuild_ms,
                                             st.cache_hits, st.runs))
            print("cpu: %s" % gearrt.cpu_features())
    except gearrt.Error as e:
        print("gearrt: error: %s" % e, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
