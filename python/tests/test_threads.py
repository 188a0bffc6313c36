"""Threads (the GIL released during a run; a busy session raises) and
memory over many runs."""
import os
import threading

import numpy as np
import pytest

import gearrt


def feeds_for(m, gear, seed):
    """Inputs at a gear: floats in [-0.5, 0.5), integers 16000."""
    rng = np.random.default_rng(seed)
    dims = iter(m.gears[gear].dims)
    feeds = {}
    for i in m.inputs:
        shape = tuple(next(dims) if d is None else d for d in i.shape)
        feeds[i.name] = (rng.random(shape).astype(i.dtype) - 0.5
                         if i.dtype.kind == "f" else
                         np.full(shape, 16000, i.dtype))
    return feeds


def test_two_threads_equal_one(ort_om):
    m = gearrt.Model(ort_om("det"))
    work = [feeds_for(m, g % len(m.gears), g) for g in range(6)]
    s = m.session()
    want = [s.run(f) for f in work]
    got = [[None] * len(work) for _ in range(2)]

    def worker(k):
        sk = m.session()
        for r in range(3):
            for j, f in enumerate(work):
                got[k][j] = sk.run(f)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for k in range(2):
        for j in range(len(work)):
            assert np.array_equal(got[k][j]["maps"], want[j]["maps"])


def test_busy_session_raises(ort_om):
    """A second thread calling run() while the first is inside gets
    gearrt.Error; the first thread's results stay right.  This thread can
    only see the flag set if the runner released the GIL inside run()."""
    m = gearrt.Model(ort_om("det"))
    s = m.session()
    f = feeds_for(m, 2, 0)
    want = s.run(f)["maps"]
    bad, stop = [], threading.Event()

    def runner():
        try:
            for _ in range(200):
                if not np.array_equal(s.run(f)["maps"], want):
                    bad.append("wrong output")
        finally:
            stop.set()

    t = threading.Thread(target=runner)
    t.start()
    errors = 0
    while not stop.is_set() and errors < 5:
        try:
            s.run(f)
        except gearrt.Error as e:
            assert "running on another thread" in str(e)
            errors += 1
    t.join()
    assert errors and not bad
    with pytest.raises(gearrt.Error, match="closed"):
        m.close()
        s.run(f)


def rss_kb():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError("no VmRSS")


@pytest.mark.skipif("libasan" in os.environ.get("LD_PRELOAD", ""),
                    reason="ASan's quarantine keeps freed memory resident")
def test_runs_do_not_grow_memory(ort_om):
    """10,000 runs (dict, list and out= forms, and a failing one) leave the
    process's resident memory where 1,000 runs put it."""
    m = gearrt.Model(ort_om("vad"))
    s = m.session()
    f = feeds_for(m, 0, 0)
    buf = np.zeros(m.gears[0].outputs["output"], np.float32)
    bad = dict(f, input=f["input"][:, :100])

    def runs(n):
        for k in range(n):
            if k % 3 == 0:
                s.run(f)
            elif k % 3 == 1:
                s.run(None, f)
            else:
                s.run(f, out={"output": buf})
            if k % 100 == 0:
                with pytest.raises(gearrt.NoGearError):
                    s.run(bad)

    runs(1000)
    before = rss_kb()
    runs(10000)
    grown = rss_kb() - before
    assert grown < 512, "RSS grew by %d kB over 10,000 runs" % grown


@pytest.mark.skipif("libasan" in os.environ.get("LD_PRELOAD", ""),
                    reason="ASan's quarantine keeps freed memory resident")
def test_string_runs_do_not_grow_memory(strings_om):
    """The same for a string model: '<U', object and list inputs (each
    copied to UTF-8 for its run), object array outputs, and failing runs
    (a non-str element, a case mapping the library refuses)."""
    s = gearrt.Model(strings_om).session()
    forms = [np.array(["Monday", "tuesday", "w" * 300]),
             np.array(["a", "MONDAY", "c" * 40], dtype=object),
             ["x", "y", "z"]]
    bad = [np.array(["a", b"b", "c"], dtype=object),
           np.array(["\u00e9t\u00e9", "b", "c"])]

    def runs(n):
        for k in range(n):
            if k % 3 == 2:
                s.run(None, {"text": forms[k % 2]})
            else:
                s.run({"text": forms[k % 3]})
            if k % 100 == 0:
                for v in bad:
                    with pytest.raises(gearrt.Error):
                        s.run({"text": v})

    runs(1000)
    before = rss_kb()
    runs(10000)
    grown = rss_kb() - before
    assert grown < 512, "RSS grew by %d kB over 10,000 runs" % grown
