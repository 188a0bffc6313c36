"""gearrt as onnxruntime's Python API (issue 41): InferenceSession,
SessionOptions, NodeArg, run(); scripts written for onnxruntime run
unchanged, the file aside, and give ONNX Runtime's committed outputs."""
import ast
import os
import pathlib
import subprocess
import sys
import threading

import numpy as np
import onnx
import pytest

import gearrt
from conftest import DEMO_ARGS, DTYPES, FIXTURES, ORT, ort_cases
from test_outputs import escape

HERE = pathlib.Path(__file__).parent

# An onnxruntime user's script, as written for onnxruntime: run with a
# module onnxruntime that is gearrt (test_unchanged_ort_script).
ORT_SCRIPT = '''\
import sys

import numpy as np
import onnxruntime as ort

opts = ort.SessionOptions()
opts.intra_op_num_threads = 2
opts.inter_op_num_threads = 1
opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
opts.log_severity_level = 3
print(ort.get_available_providers())
sess = ort.InferenceSession(sys.argv[1], sess_options=opts,
                            providers=["CPUExecutionProvider"])
inp = sess.get_inputs()[0]
out = sess.get_outputs()[0]
print(inp.name, inp.type, inp.shape)
print(out.name, out.type, out.shape)
x = np.load(sys.argv[2])
y = sess.run(None, {inp.name: x})[0]
np.save(sys.argv[3], y)
print(sess.get_providers(), sess.get_modelmeta().graph_name)
'''


def test_unchanged_ort_script(demo_om, tmp_path):
    """The script above, unchanged, with `onnxruntime` a module that is
    gearrt: it prints what onnxruntime would (the dim's name aside) and
    its output is gearrt's own, bit for bit."""
    (tmp_path / "onnxruntime.py").write_text("from gearrt import *  # noqa\n")
    (tmp_path / "script.py").write_text(ORT_SCRIPT)
    x = np.random.default_rng(1).random((4, 3, 32, 32), np.float32) - 0.5
    np.save(tmp_path / "x.npy", x)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(tmp_path), os.environ.get("PYTHONPATH", "")]))
    r = subprocess.run([sys.executable, "script.py", demo_om, "x.npy",
                        "y.npy"], cwd=tmp_path, env=env,
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [
        "['CPUExecutionProvider']",
        "x tensor(float) ['gear_dim_0', 3, 32, 32]",
        "probs tensor(float) ['gear_dim_0', 10]",
        "['CPUExecutionProvider'] demo_cnn"]
    want = gearrt.Model(demo_om).session().run({"x": x})["probs"]
    assert np.array_equal(np.load(tmp_path / "y.npy"), want)


def ort_style(path, folder, threads):
    """What an onnxruntime user writes to run a model on saved inputs."""
    import gearrt as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    feed = {i.name: np.load(folder / ("input_%s.npy" % escape(i.name)))
            for i in sess.get_inputs()}
    names = [o.name for o in sess.get_outputs()]
    return dict(zip(names, sess.run(names, feed)))


CASES = [(c, g["index"]) for c, v in ort_cases().items() for g in v["gears"]]


@pytest.mark.parametrize("case, gear", CASES,
                         ids=["%s-gear%d" % c for c in CASES])
def test_ort_fixtures(ort_om, case, gear):
    """ONNX Runtime's committed outputs for the real exports (rtol 1e-4 /
    atol 1e-5, as tests/test_runtime_ort.c), one thread and every core."""
    folder = ORT / case / ("gear%d" % gear)
    for threads in (1, 0):
        got = ort_style(ort_om(case), folder, threads)
        for name, y in got.items():
            want = np.load(folder / ("output_%s.npy" % escape(name)))
            assert y.dtype == want.dtype and y.shape == want.shape, name
            np.testing.assert_allclose(y, want, rtol=1e-4, atol=1e-5,
                                       err_msg="%s %s" % (case, name))


def ort_type(elem_type):
    """onnxruntime's NodeArg.type: TensorProto's name in lower case."""
    return "tensor(%s)" % onnx.TensorProto.DataType.Name(elem_type).lower()


def source_io(path):
    g = onnx.load(str(path)).graph
    return list(g.input), list(g.output)


def expect_like_source(args, values):
    """NodeArgs against the source's value infos: name and type equal; an
    int where the source has a dim_value, a str where a dim_param."""
    assert [a.name for a in args] == [v.name for v in values]
    for a, v in zip(args, values):
        assert a.type == ort_type(v.type.tensor_type.elem_type), a
        dims = v.type.tensor_type.shape.dim
        assert len(a.shape) == len(dims), a
        for s, d in zip(a.shape, dims):
            assert s == d.dim_value if d.HasField("dim_value") else \
                isinstance(s, str), a


def test_types_and_shapes_every_dtype(dtypes_om):
    """dtypes.onnx: one input and output per gearrt dtype, [2, 'n']."""
    sess = gearrt.InferenceSession(dtypes_om)
    ins, outs = source_io(HERE / "dtypes.onnx")
    expect_like_source(sess.get_inputs(), ins)
    expect_like_source(sess.get_outputs(), outs)
    assert [i.type for i in sess.get_inputs()] == [
        "tensor(float)", "tensor(uint8)", "tensor(int8)", "tensor(uint16)",
        "tensor(int16)", "tensor(int32)", "tensor(int64)", "tensor(string)",
        "tensor(bool)", "tensor(float16)", "tensor(double)",
        "tensor(uint32)", "tensor(uint64)", "tensor(bfloat16)"]
    # every input's varying dim takes the same values at every gear: one name
    assert {str(i.shape) for i in sess.get_inputs() + sess.get_outputs()} \
        == {"[2, 'gear_dim_0']"}
    assert repr(sess.get_inputs()[6]) == \
        "NodeArg(name='x_int64', type='tensor(int64)', shape=[2, 'gear_dim_0'])"
    # and the run: int64, bool, string and float16 through Identity
    feed = {"x_" + d: np.zeros((2, 3), gearrt.Model(dtypes_om).inputs[k].dtype)
            for k, d in enumerate(DTYPES)}
    feed["x_string"] = np.array([["a", "b", "c"], ["d", "e", "f"]])
    feed["x_int64"] = np.arange(6, dtype=np.int64).reshape(2, 3)
    feed["x_bool"] = np.array([[True, False, True]] * 2)
    feed["x_float16"] = np.full((2, 3), 1.5, np.float16)
    y = sess.run(["y_int64", "y_bool", "y_string", "y_float16"], feed)
    assert [a.dtype for a in y] == [np.int64, bool, object, np.float16]
    assert np.array_equal(y[0], feed["x_int64"])
    assert np.array_equal(y[1], feed["x_bool"])
    assert y[2].tolist() == feed["x_string"].tolist()
    assert np.array_equal(y[3], feed["x_float16"])


def test_shapes_name_the_gear_dims(ort_om, compile_om):
    """A --hybrid compile keeps the source's dim names; other compiles
    name each varying dim after the gear dim it is ('gear_dim_K'), an
    output's too where it equals one at every gear, else '<out>_dim<A>';
    a static compile has ints only."""
    demo = gearrt.InferenceSession(compile_om(
        "demo_hybrid", FIXTURES / "demo_cnn.onnx", DEMO_ARGS + ["--hybrid"]))
    assert [a.shape for a in demo.get_inputs() + demo.get_outputs()] == \
        [["N", 3, 32, 32], ["N", 10]]
    det = gearrt.InferenceSession(ort_om("det"))  # image size: H, W
    assert [a.shape for a in det.get_inputs() + det.get_outputs()] == \
        [[1, 3, "gear_dim_0", "gear_dim_1"], [1, 1, "gear_dim_0",
                                              "gear_dim_1"]]
    rec = gearrt.InferenceSession(ort_om("rec"))  # probs' T is W / 4
    assert [a.shape for a in rec.get_inputs() + rec.get_outputs()] == \
        [[1, 3, 48, "gear_dim_0"], [1, "probs_dim1", 97]]
    ins, outs = source_io(FIXTURES / "rec.onnx")
    expect_like_source(rec.get_inputs(), ins)
    expect_like_source(rec.get_outputs(), outs)
    static = gearrt.InferenceSession(compile_om(
        "demo_static", FIXTURES / "demo_cnn.onnx",
        ["--input_shape=x:2,3,32,32"]))
    assert [a.shape for a in static.get_inputs() + static.get_outputs()] == \
        [[2, 3, 32, 32], [2, 10]]


def test_bytes_equal_path(demo_om):
    """bytes, bytearray and memoryview of the file give the session the
    path gives: the same description, the same outputs bit for bit."""
    x = np.random.default_rng(2).random((8, 3, 32, 32), np.float32)
    by_path = gearrt.InferenceSession(pathlib.Path(demo_om))
    want = by_path.run(None, {"x": x})
    data = open(demo_om, "rb").read()
    for d in (data, bytearray(data), memoryview(data)):
        s = gearrt.InferenceSession(d)
        assert repr(s.get_inputs()) == repr(by_path.get_inputs())
        assert repr(s.get_outputs()) == repr(by_path.get_outputs())
        assert s.get_modelmeta().graph_name == "demo_cnn"
        got = s.run(None, {"x": x})
        assert len(got) == 1 and np.array_equal(got[0], want[0])
        assert got[0].tobytes() == want[0].tobytes()


def test_threads_share_one_session(demo_om):
    """8 Python threads x 200 runs on one InferenceSession, every gear:
    each output byte-equal to a lone run's, no exception."""
    sess = gearrt.InferenceSession(demo_om)
    rng = np.random.default_rng(3)
    xs = [rng.random((b, 3, 32, 32), np.float32) - 0.5 for b in (1, 4, 8)]
    want = [gearrt.InferenceSession(demo_om).run(None, {"x": x})[0].tobytes()
            for x in xs]
    bad = []

    def worker(k):
        try:
            for r in range(200):
                j = (k + r) % len(xs)
                y = sess.run(["probs"], {"x": xs[j]})[0]
                if y.tobytes() != want[j]:
                    bad.append("thread %d run %d differs" % (k, r))
        except Exception as e:  # noqa: BLE001 - reported below
            bad.append("thread %d: %r" % (k, e))

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not bad, bad[:5]
    assert sess.session.stats.runs == 8 * 200


def test_results_are_fresh_arrays(demo_om):
    """Each run's arrays are the caller's: later runs leave them alone."""
    sess = gearrt.InferenceSession(demo_om)
    x = np.random.default_rng(4).random((4, 3, 32, 32), np.float32)
    a = sess.run(None, {"x": x})[0]
    keep = a.copy()
    sess.run(None, {"x": np.zeros_like(x)})
    assert a.flags.owndata and np.array_equal(a, keep)


def test_errors(demo_om, tmp_path):
    sess = gearrt.InferenceSession(demo_om)
    x = np.zeros((1, 3, 32, 32), np.float32)
    with pytest.raises(gearrt.Error,
                       match="^no input 'X'; the inputs are: x$"):
        sess.run(None, {"X": x})
    with pytest.raises(gearrt.Error,
                       match="^no input 'y'; the inputs are: x$"):
        sess.run(None, {"x": x, "y": x})
    with pytest.raises(gearrt.Error,
                       match="^input 'x' is not given; the inputs are: x$"):
        sess.run(None, {})
    with pytest.raises(gearrt.Error, match="^output_names: no output 'q'; "
                                           "the outputs are: probs$"):
        sess.run(["q"], {"x": x})
    with pytest.raises(gearrt.Error,
                       match="^input 'x': dtype float64, expected float32$"):
        sess.run(None, {"x": x.astype(np.float64)})
    with pytest.raises(gearrt.NoGearError, match="gears are: 1; 4; 8$"):
        sess.run(None, {"x": np.zeros((3, 3, 32, 32), np.float32)})
    with pytest.raises(gearrt.Error, match="^provider 'CUDAExecutionProvider'"
                                           " is not available: gearrt runs "
                                           "on the CPU only"):
        gearrt.InferenceSession(demo_om, providers=["CUDAExecutionProvider",
                                                    "CPUExecutionProvider"])
    with pytest.raises(gearrt.Error, match="'TensorrtExecutionProvider'"):
        sess.set_providers([("TensorrtExecutionProvider", {})])
    with pytest.raises(ValueError, match="same length"):
        gearrt.InferenceSession(demo_om, providers=["CPUExecutionProvider"],
                                provider_options=[{}, {}])
    with pytest.raises(TypeError, match="sess_options"):
        gearrt.InferenceSession(demo_om, {"intra_op_num_threads": 1})
    with pytest.raises(TypeError, match="run_options"):
        sess.run(None, {"x": x}, {"tag": 1})
    so = gearrt.SessionOptions()
    so.intra_op_num_threads = 2
    with pytest.raises(ValueError, match="disagree"):
        gearrt.InferenceSession(demo_om, so, threads=3)
    with pytest.raises(AttributeError):
        so.intra_op_threads = 2  # a misspelt option is no option
    onnx_file = tmp_path / "model.onnx"
    onnx_file.write_bytes((FIXTURES / "demo_cnn.onnx").read_bytes())
    with pytest.raises(gearrt.Error, match="compile it first, gearc "
                                           "--model=.*model.onnx"):
        gearrt.InferenceSession(str(onnx_file))
    with pytest.raises(gearrt.Error, match="^<memory>: "):
        gearrt.InferenceSession(b"\0" * 64)


def test_session_api(demo_om):
    """What onnxruntime's InferenceSession offers besides run()."""
    so = gearrt.SessionOptions()
    assert so.intra_op_num_threads == 0 and so.inter_op_num_threads == 0
    assert so.graph_optimization_level == \
        gearrt.GraphOptimizationLevel.ORT_ENABLE_ALL == 99
    assert gearrt.ExecutionMode.ORT_PARALLEL == 1
    so.intra_op_num_threads = 1
    so.execution_mode = gearrt.ExecutionMode.ORT_PARALLEL
    so.enable_profiling = False
    so.add_session_config_entry("session.intra_op.allow_spinning", "0")
    sess = gearrt.InferenceSession(demo_om, so,
                                   providers=[("CPUExecutionProvider", {})],
                                   provider_options=[{}])
    assert sess.get_providers() == ["CPUExecutionProvider"]
    assert sess.get_provider_options() == {"CPUExecutionProvider": {}}
    got = sess.get_session_options()
    assert got is not so and got.intra_op_num_threads == 1
    assert got.execution_mode == gearrt.ExecutionMode.ORT_PARALLEL
    assert got.get_session_config_entry(
        "session.intra_op.allow_spinning") == "0"
    assert gearrt.InferenceSession(demo_om).get_session_options() \
        .intra_op_num_threads == 0  # every core
    assert gearrt.InferenceSession(demo_om, threads=2) \
        .get_session_options().intra_op_num_threads == 2
    meta = sess.get_modelmeta()
    assert (meta.producer_name, meta.graph_name, meta.domain, meta.version,
            meta.description, meta.custom_metadata_map) == \
        ("gearc-fixtures", "demo_cnn", "", 0, "", {})
    assert sess.get_overridable_initializers() == []
    assert gearrt.get_available_providers() == ["CPUExecutionProvider"]
    assert gearrt.get_device() == "CPU"
    gearrt.set_default_logger_severity(3)
    sess.set_providers(["CPUExecutionProvider"])
    sess.disable_fallback()
    x = np.zeros((4, 3, 32, 32), np.float32)
    a = sess.run(None, {"x": x}, gearrt.RunOptions())
    b = sess.run([], {"x": x})  # [] is every output, as in onnxruntime
    c = sess.run(("probs", "probs"), {"x": x})
    assert len(a) == len(b) == 1 and len(c) == 2
    assert np.array_equal(a[0], b[0]) and np.array_equal(c[1], a[0])
    assert sess.session.last_gear == 1 and len(sess.model.gears) == 3


@pytest.fixture(scope="module")
def padbatch_om(compile_om):
    def compile_(name):
        return compile_om("pb_" + name, FIXTURES / "padbatch" /
                          (name + ".onnx"),
                          ["--input_shape=x:%s" % ("-1,3,8,8" if name == "cnn"
                                                   else "-1,4,8"),
                           "--dynamic_batch_size=1,4,8"])
    return compile_


def test_pad_batch(padbatch_om):
    """pad_batch=True: a batch of 3 runs on the gear of 4, each row equal
    to its own run; without it NoGearError; a model whose ReduceMean mixes
    the batch rows refuses, naming the node."""
    x = np.random.default_rng(5).random((3, 3, 8, 8), np.float32) - 0.5
    cnn = padbatch_om("cnn")
    with pytest.raises(gearrt.NoGearError):
        gearrt.InferenceSession(cnn).run(None, {"x": x})
    sess = gearrt.InferenceSession(cnn, pad_batch=True)
    (y,) = sess.run(None, {"x": x})
    assert y.shape[0] == 3 and sess.session.last_gear == 1
    for b in range(3):
        (yb,) = sess.run(None, {"x": x[b:b + 1]})
        np.testing.assert_allclose(y[b:b + 1], yb, rtol=1e-5, atol=1e-7)
    mix = gearrt.InferenceSession(padbatch_om("mix_reduce"), pad_batch=True)
    with pytest.raises(gearrt.NoGearError,
                       match=r"^pad_batch: .*node '[^']*' \(ReduceMean\) "
                             "mixes the rows"):
        mix.run(None, {"x": np.zeros((3, 4, 8), np.float32)})
    assert mix.run(None, {"x": np.zeros((4, 4, 8), np.float32)})[0] \
        .shape[0] == 4


def stub_names(tree):
    return {n.name for n in tree.body
            if isinstance(n, (ast.ClassDef, ast.FunctionDef))} | \
        {t.id for n in tree.body if isinstance(n, (ast.Assign, ast.AnnAssign))
         for t in (n.targets if isinstance(n, ast.Assign) else [n.target])
         if isinstance(t, ast.Name)}


def test_stubs_cover_the_api():
    """__init__.pyi declares every public name and every public method of
    InferenceSession and SessionOptions (py.typed ships with it)."""
    pkg = pathlib.Path(gearrt.__file__).parent
    assert (pkg / "py.typed").exists()
    tree = ast.parse((pkg / "__init__.pyi").read_text())
    assert set(gearrt.__all__) <= stub_names(tree)
    classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
    for cls in (gearrt.InferenceSession, gearrt.SessionOptions,
                gearrt.Model, gearrt.Session):
        public = {k for k in dir(cls) if not k.startswith("_")}
        declared = {n.name for n in classes[cls.__name__].body
                    if isinstance(n, ast.FunctionDef)} | \
            {n.target.id for n in classes[cls.__name__].body
             if isinstance(n, ast.AnnAssign)}
        assert public <= declared, (cls.__name__, public - declared)
    for obj in (gearrt.InferenceSession, gearrt.InferenceSession.run,
                gearrt.SessionOptions, gearrt.NodeArg, gearrt.ModelMetadata):
        assert obj.__doc__ and len(obj.__doc__) > 20, obj
