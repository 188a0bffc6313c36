"""Threads (the GIL released during a run; one session run by many
threads at once; close() refused while a run is under way) and memory
over many runs."""
import os
import sys
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


def test_one_session_many_threads(ort_om):
    """Four threads running one Session at once, on every gear, get what
    a lone run gets, with no exception (the GIL released in run())."""
    m = gearrt.Model(ort_om("det"))
    s = m.session()
    work = [feeds_for(m, g % len(m.gears), g) for g in range(6)]
    want = [s.run(f)["maps"] for f in work]
    bad = []

    def worker(k):
        try:
            for r in range(20):
                j = (k + r) % len(work)
                if not np.array_equal(s.run(work[j])["maps"], want[j]):
                    bad.append("thread %d run %d: wrong output" % (k, r))
        except Exception as e:  # noqa: BLE001 - reported below
            bad.append("thread %d: %r" % (k, e))

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not bad
    assert s.stats.runs == len(work) + 4 * 20


def test_close_refuses_while_running(ort_om):
    """close() while another thread's run is under way raises and leaves
    the session open; once the runs return it closes.  The switch interval
    is raised so that the runner gives up the GIL only inside run(): this
    thread then holds it only while a run is under way."""
    m = gearrt.Model(ort_om("det"))
    s = m.session()
    f = feeds_for(m, 2, 0)
    want = s.run(f)["maps"]
    started, stop, bad = threading.Event(), threading.Event(), []

    def runner():
        started.set()
        while not stop.is_set():
            if not np.array_equal(s.run(f)["maps"], want):
                bad.append("wrong output")

    interval = sys.getswitchinterval()
    sys.setswitchinterval(30)
    try:
        t = threading.Thread(target=runner)
        t.start()
        started.wait()
        with pytest.raises(gearrt.Error,
                           match="has 1 run under way: close it once it "
                                 "returns$"):
            s.close()
        stop.set()
        t.join()
    finally:
        sys.setswitchinterval(interval)
    assert not bad
    assert np.array_equal(s.run(f)["maps"], want)
    s.close()
    with pytest.raises(gearrt.Error, match="^session of .* is closed$"):
        s.run(f)
    with pytest.raises(gearrt.Error, match="closed"):
        m.close()
        m.session()


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


def test_close_from_an_input_refuses(demo_om):
    """An input whose conversion closes the session (Python code run while
    run() binds it) is refused: the run is under way from its start, so
    neither the session nor the model goes from under it."""
    m = gearrt.Model(demo_om)
    s = m.session()
    x = np.zeros((1, 3, 32, 32), np.float32)

    class Closer:
        def __array__(self, dtype=None):
            m.close()  # marks the model; it stays while s is open
            s.close()
            return x

    with pytest.raises(gearrt.Error, match="has 1 run under way"):
        s.run({"x": Closer()})
    assert m.closed
    with pytest.raises(gearrt.Error, match="^model .* is closed$"):
        s.run({"x": x})
    s.close()
