"""gearrt's API: description, dtypes, run forms, out=, errors, lifetimes."""
import gc
import tracemalloc

import numpy as np
import pytest

import gearrt
from conftest import DTYPES


def test_version_and_docs():
    assert gearrt.__version__ and gearrt.__version__[0].isdigit()
    for obj in (gearrt, gearrt.Model, gearrt.Session, gearrt.Session.run,
                gearrt.Model.session, gearrt.Model.close, gearrt.Error,
                gearrt.NoGearError, gearrt.IOInfo, gearrt.Gear, gearrt.Stats):
        assert obj.__doc__ and len(obj.__doc__) > 20, obj
    assert "out" in gearrt.Session.run.__doc__
    assert issubclass(gearrt.Error, ValueError)
    assert issubclass(gearrt.Error, RuntimeError)
    assert issubclass(gearrt.NoGearError, gearrt.Error)


def test_describe(demo_om):
    m = gearrt.Model(demo_om)
    assert m.path == demo_om
    (x,), (probs,) = m.inputs, m.outputs
    assert (x.name, x.dtype, x.shape, x.type) == \
        ("x", np.dtype(np.float32), (None, 3, 32, 32), "float32")
    assert (probs.name, probs.shape) == ("probs", (None, 10))
    assert [(g.index, g.dims, g.outputs) for g in m.gears] == [
        (0, (1,), {"probs": (1, 10)}), (1, (4,), {"probs": (4, 10)}),
        (2, (8,), {"probs": (8, 10)})]
    assert not m.has_dynamic and not m.closed
    assert repr(m) == "<gearrt.Model %r (1 inputs, 1 outputs, 3 gears)>" \
        % demo_om


def test_every_dtype_round_trips(dtypes_om):
    """Every dtype of gearrt.h through Identity: same values, same type."""
    m = gearrt.Model(dtypes_om)
    assert [i.type for i in m.inputs] == DTYPES
    rng = np.random.default_rng(1)
    feeds = {}
    for i in m.inputs:
        if i.type == "string":  # object arrays of str, not only ASCII
            v = np.array([["a", "ß", ""], ["日本", "x y", "\U0001F600"]],
                         dtype=object)
        elif i.type == "bfloat16":  # crosses as uint16 bits
            v = (rng.standard_normal((2, 3)).astype(np.float32)
                 .view(np.uint32) >> 16).astype(np.uint16)
        elif i.dtype.kind == "f":
            v = rng.standard_normal((2, 3)).astype(i.dtype)
        elif i.dtype.kind == "b":
            v = rng.integers(0, 2, (2, 3)).astype(bool)
        else:
            info = np.iinfo(i.dtype)
            v = rng.integers(info.min, info.max, (2, 3), dtype=i.dtype,
                             endpoint=True)
        feeds[i.name] = v
    outs = m.session().run(feeds)
    for d in DTYPES:
        x, y = feeds["x_" + d], outs["y_" + d]
        assert y.dtype == x.dtype and y.shape == (2, 3), d
        if d == "string":
            assert y.tolist() == x.tolist(), d
        else:
            assert np.array_equal(y.view(np.uint8), x.view(np.uint8)), d


def test_run_forms(demo_om):
    s = gearrt.Model(demo_om).session()
    x = np.random.default_rng(2).random((4, 3, 32, 32), np.float32)
    d = s.run({"x": x})
    assert list(d) == ["probs"] and d["probs"].shape == (4, 10)
    assert (s.last_gear, s.last_path) == (1, "gear")
    (a,) = s.run(None, {"x": x})
    (b,) = s.run(["probs"], {"x": x})
    assert np.array_equal(a, d["probs"]) and np.array_equal(b, a)
    # fresh arrays the caller owns: a later run leaves them alone
    s.run({"x": np.zeros_like(x)})
    assert np.array_equal(a, d["probs"])
    st = s.stats
    assert (st.runs, st.gear_runs, st.dynamic_runs) == (4, 4, 0)
    assert st.prepare_ms > 0  # the gear's first-run set-up, timed


def test_converted_inputs(demo_om):
    """Non-contiguous, big-endian and list inputs give the same outputs."""
    s = gearrt.Model(demo_om).session()
    x = np.random.default_rng(3).random((1, 3, 32, 32), np.float32)
    want = s.run({"x": x})["probs"]
    for v in (np.asfortranarray(x), x.astype(">f4"), x.tolist(),
              np.repeat(x, 2, axis=0)[::2]):
        assert np.array_equal(s.run({"x": v})["probs"], want)


def test_out_buffers(demo_om):
    s = gearrt.Model(demo_om).session()
    x = np.random.default_rng(4).random((4, 3, 32, 32), np.float32)
    want = s.run({"x": x})["probs"]
    buf = np.full((4, 10), np.nan, np.float32)
    got = s.run({"x": x}, out={"probs": buf})["probs"]
    assert got is buf and np.array_equal(buf, want)
    big = np.zeros((8, 10), np.float32)  # room for the largest gear
    got = s.run(None, {"x": x}, out={"probs": big})[0]
    assert got.shape == (4, 10) and got.base is big
    assert np.array_equal(big[:4], want)
    with pytest.raises(gearrt.Error, match="out 'probs'"):
        s.run({"x": x}, out={"probs": np.zeros((4, 10), np.float64)})
    with pytest.raises(gearrt.Error, match="buffer"):
        s.run({"x": x}, out={"probs": np.zeros((2, 10), np.float32)})
    with pytest.raises(gearrt.Error, match="no output 'p'"):
        s.run({"x": x}, out={"p": buf})


@pytest.mark.parametrize("x, msg", [
    (np.zeros((4, 3, 32, 32), np.float64),
     "^input 'x': dtype float64, expected float32$"),
    (np.zeros((3, 32, 32), np.float32), "^input 'x': rank 3, expected 4$"),
    (np.zeros((1,) * 9, np.float32), "^input 'x': rank 9, expected 4$"),
    (np.zeros((4, 3, 32, 31), np.float32),
     r"^input 'x': shape \[4,3,32,31\], expected \[-1,3,32,32\]$"),
    (np.zeros((4, 3, 32, 32), np.complex64),
     "^input 'x': numpy dtype dtype\\('complex64'\\) has no gearrt dtype"),
])
def test_input_errors(demo_om, x, msg):
    s = gearrt.Model(demo_om).session()
    with pytest.raises(gearrt.Error, match=msg) as e:
        s.run({"x": x})
    assert not isinstance(e.value, gearrt.NoGearError)


def test_feed_errors(demo_om):
    s = gearrt.Model(demo_om).session()
    x = np.zeros((1, 3, 32, 32), np.float32)
    with pytest.raises(gearrt.Error,
                       match="^input 'x' is not given; the inputs are: x$"):
        s.run({})
    with pytest.raises(gearrt.Error, match="^no input 'y'; the inputs are: "
                                           "x$"):
        s.run({"x": x, "y": x})
    # a misspelt name is what is reported, not the input it leaves out
    with pytest.raises(gearrt.Error, match="^no input 'X'; the inputs are: "
                                           "x$"):
        s.run({"X": x})
    with pytest.raises(TypeError):
        s.run([x])
    with pytest.raises(gearrt.Error, match="^output_names: no output 'q'; "
                                           "the outputs are: probs$"):
        s.run(["probs", "q"], {"x": x})
    assert s.stats.runs == 0  # names are checked before a run
    with pytest.raises(gearrt.Error, match="no such file|cannot"):
        gearrt.Model(demo_om + ".missing")
    with pytest.raises(gearrt.Error, match="model not open"):
        gearrt.Model.__new__(gearrt.Model).session()


def test_no_gear(demo_om):
    s = gearrt.Model(demo_om).session()
    with pytest.raises(gearrt.NoGearError, match="gears are: 1; 4; 8$"):
        s.run({"x": np.zeros((3, 3, 32, 32), np.float32)})
    assert s.last_path is None and s.last_gear is None


def test_closed(demo_om):
    x = np.zeros((1, 3, 32, 32), np.float32)
    m = gearrt.Model(demo_om)
    s = m.session()
    s.run({"x": x})
    m.close()
    m.close()
    assert m.closed and m.inputs  # the description stays
    with pytest.raises(gearrt.Error, match="is closed"):
        s.run({"x": x})
    with pytest.raises(gearrt.Error, match="is closed"):
        m.session()
    del s
    gc.collect()
    with gearrt.Model(demo_om) as m2:
        with m2.session() as s2:
            s2.run({"x": x})
        with pytest.raises(gearrt.Error, match="^session of .* is closed$"):
            s2.run({"x": x})
        m2.session().run({"x": x})
    with pytest.raises(gearrt.Error, match="^model .* is closed$"):
        m2.session()


def test_zero_copy(demo_om):
    """A C-contiguous input is read in place: no allocation of its size
    during the run (tracemalloc sees numpy's data); a Fortran-order one is
    copied once."""
    s = gearrt.Model(demo_om).session()
    x = np.random.default_rng(5).random((8, 3, 32, 32), np.float32)
    s.run({"x": x})
    f = np.asfortranarray(x)

    def peak(v):
        tracemalloc.start()
        s.run({"x": v})
        p = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        return p

    assert peak(x) < x.nbytes // 4
    assert peak(f) >= x.nbytes


def test_profile_and_no_fast_from_the_environment(demo_om):
    """GEARRT_PROFILE and GEARRT_NO_FAST act as in gearc run: the module
    passes them to the session's options."""
    import os
    import subprocess
    import sys
    code = ("import gearrt, numpy as np\n"
            "s = gearrt.Model(%r).session()\n"
            "s.run({'x': np.zeros((1, 3, 32, 32), np.float32)})\n"
            "del s\n" % demo_om)

    def profile(**env):
        r = subprocess.run([sys.executable, "-c", code],
                           env=dict(os.environ, **env),
                           capture_output=True, text=True, check=True)
        return r.stderr
    fast = profile(GEARRT_PROFILE="1", GEARRT_NO_FAST="0")
    assert "gearrt profile:" in fast and "Conv/dnnl.conv" in fast
    ref = profile(GEARRT_PROFILE="nodes", GEARRT_NO_FAST="1")
    assert "Conv/ref" in ref and "dnnl." not in ref and "  node " in ref
    assert profile(GEARRT_PROFILE="0") == ""


def test_from_bytes(demo_om):
    """Model.from_bytes opens the same file from memory (copied: the
    buffer may change once it returns); a str is refused as no .om."""
    data = bytearray(open(demo_om, "rb").read())
    m = gearrt.Model.from_bytes(data)
    assert m.path == "<memory>"
    assert m.inputs == gearrt.Model(demo_om).inputs
    assert m.gears == gearrt.Model(demo_om).gears
    data[:] = b"\0" * len(data)
    x = np.random.default_rng(8).random((4, 3, 32, 32), np.float32)
    assert np.array_equal(m.session().run({"x": x})["probs"],
                          gearrt.Model(demo_om).session().run({"x": x})["probs"])
    view = memoryview(open(demo_om, "rb").read())
    assert gearrt.Model.from_bytes(view).outputs == m.outputs
    with pytest.raises(gearrt.Error, match="^<memory>: "):
        gearrt.Model.from_bytes(b"not a model")
    with pytest.raises(TypeError, match="got str"):
        gearrt.Model.from_bytes(demo_om)


def test_meta_and_dim_names(demo_om, compile_om):
    """What the source said of itself (demo_cnn.onnx: producer
    gearc-fixtures 1, graph demo_cnn, dims ['N', 3, 32, 32]); a --hybrid
    compile keeps the dim's name, a plain one does not."""
    from conftest import DEMO_ARGS, FIXTURES
    m = gearrt.Model(demo_om)
    assert m.meta == {"producer_name": "gearc-fixtures",
                      "producer_version": "1", "domain": "",
                      "model_version": "0", "graph_name": "demo_cnn",
                      "source_file": "demo_cnn.onnx"}
    m.meta["domain"] = "changed"  # a copy
    assert m.meta["domain"] == ""
    assert m.input_dim_names == ((None, None, None, None),)
    h = gearrt.Model(compile_om("demo_hybrid", FIXTURES / "demo_cnn.onnx",
                                DEMO_ARGS + ["--hybrid"]))
    assert h.input_dim_names == (("N", None, None, None),)


def test_session_pad_batch_and_concurrency(compile_om):
    """pad_batch=True runs a batch of 3 on the gear of 4, each row as
    alone; without it the batch matches no gear."""
    from conftest import FIXTURES
    om = compile_om("pb_cnn", FIXTURES / "padbatch" / "cnn.onnx",
                    ["--input_shape=x:-1,3,8,8",
                     "--dynamic_batch_size=1,4,8"])
    m = gearrt.Model(om)
    x = np.random.default_rng(9).random((3, 3, 8, 8), np.float32) - 0.5
    with pytest.raises(gearrt.NoGearError):
        m.session().run({"x": x})
    s = m.session(pad_batch=True, concurrency=2)
    y = s.run({"x": x})["y"]
    assert y.shape[0] == 3 and s.last_gear == 1
    one = m.session()
    for b in range(3):
        np.testing.assert_allclose(y[b:b + 1], one.run({"x": x[b:b + 1]})["y"],
                                   rtol=1e-5, atol=1e-7)
    with pytest.raises(gearrt.Error, match="concurrency"):
        m.session(concurrency=-1)
