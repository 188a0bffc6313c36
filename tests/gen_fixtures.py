#!/usr/bin/python3
"""Generates gearc's ONNX test fixtures into tests/fixtures/.

Rerun from the repository root after changing it:

    /usr/bin/python3 tests/gen_fixtures.py

The fixtures are committed; neither the build nor the tests run Python.
Generation is deterministic (fixed seeds, fixed external-data offsets, no
timestamps): rerunning gives byte-identical files.

Valid models (checked with onnx.checker):
  demo_cnn.onnx        x float [N,3,32,32] -> Conv(8,3x3,pad 1) -> BatchNorm
                       -> Relu -> MaxPool(2x2,s2) -> Conv(16,3x3,pad 1) -> Relu
                       -> GlobalAveragePool -> Flatten -> Gemm(10,transB=1)
                       -> Softmax(axis=1) -> probs.  The model `make demo`
                       compiles; 10 nodes, weights from seed 1234.
  mlp.onnx             x float [N,64] -> MatMul(64x32) -> Add -> Relu
                       -> Reshape(shape initializer [-1,32]) -> Gemm(10) -> y.
                       W1 is also listed as a graph input (must become a
                       weight, not an input).
  external_data.onnx   x float [N,16] -> MatMul(W 16x8) -> Add(b 8) -> y, with
  external_data.bin    W and b stored externally by onnx.external_data_helper
                       (W at offset 0, 512 bytes; b at offset 512, 32 bytes).
  big_external.onnx    x + W with W a 256 MiB float weight in big.bin (not
                       committed: the crash-safety test makes it sparse)
  external_misaligned.onnx / .bin
                       int8 'k' [3] at offset 0 and float 'f' [4] at offset 3
                       (misaligned for float) of the same file.
  if_subgraph.onnx     If whose branches use 'h' (Relu output of the main
                       graph) and the weight 'one'; the else branch holds a
                       second If whose branches use 'h' and 'two' - the
                       else branch itself does not, so its VAL_OUTER 'h'
                       exists only to chain the inner reference.
  loop_body.onnx       Loop(trip 3, cond true, v=x) whose body adds 'w'
                       (Mul output of the main graph) to the carried value.
  three_inputs.onnx    tokens int64 [B,T], mask float [B,T], image float
                       [1,3,224,224]: Cast/Mul/Add/Relu -> seq_out [B,T];
                       GlobalAveragePool/Flatten/MatMul -> img_out [1,4].
  two_inputs.onnx      a, b float [N,3,H,W] -> Add -> Relu -> out.
  typed_data.onnx      initializers using the typed fields (float_data,
                       int32_data for int8/uint8/int16/uint16/bool/float16/
                       bfloat16/int32, int64_data, double_data, uint64_data
                       for uint32/uint64, string_data) and a rank-0 one.
  attrs.onnx           one node (domain ai.gearc.test) with an attribute of
                       every supported type, plus a Constant with value_ints.
  deep_nesting_64.onnx If nested 64 subgraph levels deep (the maximum).
  unordered.onnx       nodes not in topological order: an If whose branch
                       reads 'h' comes before the Relu producing 'h', and
                       'y' = Neg(t) before 't' = If(...).

Malformed models (each must be rejected with a clear message):
  bad_dangling_input.onnx  node 'add1' reads 'ghost', which nobody produces
  bad_dangling_subgraph.onnx  an If branch reads 'ghost'
  bad_two_producers.onnx   nodes 'r1' and 'r2' both write 'h'
  bad_cycle.onnx           'a' = Relu(b), 'b' = Relu(a)
  bad_dtype.onnx           value_info 'h' with elem_type 99
  bad_dtype_init.onnx      initializer 'W' with data_type 99
  bad_data_size.onnx       initializer 'W' [4,4] float with 12 bytes raw_data
  bad_typed_count.onnx     initializer 'W' [2,3] float with 5 float_data
  bad_rank9.onnx           input 'x' of rank 9
  bad_neg_dim.onnx         input 'x' with dim_value -3
  bad_huge_tensor.onnx     initializer 'W' claiming [1<<20,1<<20,1<<10] float
                           with 16 bytes of data
  bad_overflow_tensor.onnx initializer 'W' claiming [1<<40,1<<40] (overflows)
  bad_sparse.onnx          a sparse initializer 'S'
  bad_external_escape.onnx external data location '../external_data.bin'
  bad_external_abs.onnx    external data location '/etc/passwd'
  bad_external_range.onnx  external data offset 500, length 64 in a 544-byte
                           file
  bad_deep_nesting.onnx    If nested 65 subgraph levels deep
  truncated.onnx           demo_cnn.onnx cut in half
  not_onnx.onnx            a text file
  empty.onnx               an empty file
"""

import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from onnx import external_data_helper

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "fixtures")
OPSET = 13
FLOAT = TensorProto.FLOAT


def path(name):
    return os.path.join(OUT, name)


def model(graph, opset=OPSET):
    m = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", opset)],
        producer_name="gearc-fixtures",
        producer_version="1",
    )
    m.ir_version = 8
    return m


def save(m, name, check=True):
    if check:
        onnx.checker.check_model(m)
    with open(path(name), "wb") as f:
        f.write(m.SerializeToString())
    return m


def init(name, arr):
    return numpy_helper.from_array(np.ascontiguousarray(arr), name)


def vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


# ---- valid models -----------------------------------------------------------

def demo_cnn():
    rng = np.random.RandomState(1234)
    f32 = np.float32

    def rand(*shape, scale=0.1):
        return (rng.standard_normal(shape) * scale).astype(f32)

    inits = [
        init("conv1.W", rand(8, 3, 3, 3)),
        init("conv1.B", rand(8)),
        init("bn1.scale", rng.uniform(0.5, 1.5, 8).astype(f32)),
        init("bn1.B", rand(8)),
        init("bn1.mean", rand(8)),
        init("bn1.var", rng.uniform(0.5, 1.5, 8).astype(f32)),
        init("conv2.W", rand(16, 8, 3, 3)),
        init("conv2.B", rand(16)),
        init("fc.W", rand(10, 16)),
        init("fc.B", rand(10)),
    ]
    nodes = [
        helper.make_node("Conv", ["x", "conv1.W", "conv1.B"], ["c1"],
                         name="conv1", kernel_shape=[3, 3],
                         pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization",
                         ["c1", "bn1.scale", "bn1.B", "bn1.mean", "bn1.var"],
                         ["b1"], name="bn1", epsilon=1e-5),
        helper.make_node("Relu", ["b1"], ["r1"], name="relu1"),
        helper.make_node("MaxPool", ["r1"], ["p1"], name="pool1",
                         kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Conv", ["p1", "conv2.W", "conv2.B"], ["c2"],
                         name="conv2", kernel_shape=[3, 3],
                         pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c2"], ["r2"], name="relu2"),
        helper.make_node("GlobalAveragePool", ["r2"], ["g"], name="gap"),
        helper.make_node("Flatten", ["g"], ["f"], name="flatten", axis=1),
        helper.make_node("Gemm", ["f", "fc.W", "fc.B"], ["logits"],
                         name="fc", transB=1),
        helper.make_node("Softmax", ["logits"], ["probs"], name="softmax",
                         axis=1),
    ]
    g = helper.make_graph(nodes, "demo_cnn",
                          [vi("x", FLOAT, ["N", 3, 32, 32])],
                          [vi("probs", FLOAT, ["N", 10])], inits)
    return save(model(g), "demo_cnn.onnx")


def mlp():
    rng = np.random.RandomState(42)
    f32 = np.float32
    w1 = (rng.standard_normal((64, 32)) * 0.1).astype(f32)
    inits = [
        init("W1", w1),
        init("b1", (rng.standard_normal(32) * 0.1).astype(f32)),
        init("shape", np.array([-1, 32], dtype=np.int64)),
        init("W2", (rng.standard_normal((32, 10)) * 0.1).astype(f32)),
        init("b2", (rng.standard_normal(10) * 0.1).astype(f32)),
    ]
    nodes = [
        helper.make_node("MatMul", ["x", "W1"], ["mm"], name="matmul"),
        helper.make_node("Add", ["mm", "b1"], ["a"], name="add"),
        helper.make_node("Relu", ["a"], ["r"], name="relu"),
        helper.make_node("Reshape", ["r", "shape"], ["rs"], name="reshape"),
        helper.make_node("Gemm", ["rs", "W2", "b2"], ["y"], name="gemm"),
    ]
    g = helper.make_graph(nodes, "mlp",
                          [vi("x", FLOAT, ["N", 64]),
                           vi("W1", FLOAT, [64, 32])],
                          [vi("y", FLOAT, ["N", 10])], inits)
    return save(model(g), "mlp.onnx")


def external_data():
    for f in ("external_data.onnx", "external_data.bin"):
        if os.path.exists(path(f)):
            os.remove(path(f))
    w = (np.arange(16 * 8, dtype=np.float32) * 0.25 - 3.0).reshape(16, 8)
    b = np.linspace(-1, 1, 8, dtype=np.float32)
    nodes = [
        helper.make_node("MatMul", ["x", "W"], ["mm"], name="matmul"),
        helper.make_node("Add", ["mm", "b"], ["y"], name="add"),
    ]
    g = helper.make_graph(nodes, "external_data",
                          [vi("x", FLOAT, ["N", 16])],
                          [vi("y", FLOAT, ["N", 8])],
                          [init("W", w), init("b", b)])
    m = model(g)
    onnx.checker.check_model(m)
    external_data_helper.convert_model_to_external_data(
        m, all_tensors_to_one_file=True, location="external_data.bin",
        size_threshold=0)
    onnx.save_model(m, path("external_data.onnx"))


def external_misaligned():
    for f in ("external_misaligned.onnx", "external_misaligned.bin"):
        if os.path.exists(path(f)):
            os.remove(path(f))
    k = np.array([1, -2, 3], dtype=np.int8)
    fl = np.array([1.5, -2.5, 3.25, 4.0], dtype=np.float32)
    with open(path("external_misaligned.bin"), "wb") as f:
        f.write(k.tobytes())
        f.write(fl.tobytes())
    tk = init("k", k)
    tf = init("f", fl)
    for t, off, n in ((tk, 0, 3), (tf, 3, 16)):
        external_data_helper.set_external_data(
            t, "external_misaligned.bin", offset=off, length=n)
        t.ClearField("raw_data")
        t.data_location = TensorProto.EXTERNAL
    nodes = [
        helper.make_node("Cast", ["k"], ["kf"], name="cast", to=FLOAT),
        helper.make_node("Mul", ["x", "f"], ["y"], name="mul"),
        helper.make_node("ReduceSum", ["kf"], ["s"], name="sum",
                         keepdims=0),
    ]
    g = helper.make_graph(nodes, "external_misaligned",
                          [vi("x", FLOAT, ["N", 4])],
                          [vi("y", FLOAT, ["N", 4]), vi("s", FLOAT, [])],
                          [tk, tf])
    save(model(g), "external_misaligned.onnx", check=False)


BIG_ELEMS = 64 * 1024 * 1024  # float32: 256 MiB


def big_external():
    """A 256 MiB weight in big.bin, which the crash test creates as a
    sparse file next to a copy of this model: writing the .om then takes
    long enough to kill gearc in the middle, with nothing big committed."""
    w = TensorProto()
    w.name = "W"
    w.data_type = FLOAT
    w.dims.append(BIG_ELEMS)
    w.raw_data = b"\0"  # set_external_data wants one; cleared below
    external_data_helper.set_external_data(w, "big.bin", offset=0,
                                           length=4 * BIG_ELEMS)
    w.ClearField("raw_data")
    w.data_location = TensorProto.EXTERNAL
    nodes = [helper.make_node("Add", ["x", "W"], ["y"], name="add")]
    g = helper.make_graph(nodes, "big_external",
                          [vi("x", FLOAT, [BIG_ELEMS])],
                          [vi("y", FLOAT, [BIG_ELEMS])], [w])
    save(model(g), "big_external.onnx", check=False)


def if_subgraph():
    then2 = helper.make_graph(
        [helper.make_node("Mul", ["h", "two"], ["m_out"], name="mul")],
        "then2", [], [vi("m_out", FLOAT, None)])
    else2 = helper.make_graph(
        [helper.make_node("Sub", ["h", "one"], ["s_out"], name="sub")],
        "else2", [], [vi("s_out", FLOAT, None)])
    then1 = helper.make_graph(
        [helper.make_node("Add", ["h", "one"], ["t_out"], name="add")],
        "then1", [], [vi("t_out", FLOAT, None)])
    else1 = helper.make_graph(
        [helper.make_node("If", ["cond"], ["e_out"], name="if2",
                          then_branch=then2, else_branch=else2)],
        "else1", [], [vi("e_out", FLOAT, None)])
    nodes = [
        helper.make_node("Relu", ["x"], ["h"], name="relu"),
        helper.make_node("ReduceSum", ["x"], ["s"], name="rsum",
                         keepdims=0),
        helper.make_node("Greater", ["s", "zero"], ["cond"], name="gt"),
        helper.make_node("If", ["cond"], ["y"], name="if1",
                         then_branch=then1, else_branch=else1),
    ]
    inits = [
        init("one", np.array([1.0], dtype=np.float32)),
        init("two", np.array([2.0], dtype=np.float32)),
        init("zero", np.array(0.0, dtype=np.float32)),
    ]
    g = helper.make_graph(nodes, "if_subgraph",
                          [vi("x", FLOAT, ["N", 4])],
                          [vi("y", FLOAT, ["N", 4])], inits)
    return save(model(g), "if_subgraph.onnx")


def loop_body():
    body = helper.make_graph(
        [
            helper.make_node("Identity", ["c_in"], ["c_out"], name="keep"),
            helper.make_node("Add", ["v_in", "w"], ["v_out"], name="acc"),
        ],
        "body",
        [vi("i", TensorProto.INT64, []), vi("c_in", TensorProto.BOOL, []),
         vi("v_in", FLOAT, None)],
        [vi("c_out", TensorProto.BOOL, []), vi("v_out", FLOAT, None)])
    nodes = [
        helper.make_node("Mul", ["x", "half"], ["w"], name="scale"),
        helper.make_node("Loop", ["trip", "cond0", "x"], ["v_final"],
                         name="loop", body=body),
    ]
    inits = [
        init("trip", np.array(3, dtype=np.int64)),
        init("cond0", np.array(True)),
        init("half", np.array(0.5, dtype=np.float32)),
    ]
    g = helper.make_graph(nodes, "loop_body", [vi("x", FLOAT, ["N", 4])],
                          [vi("v_final", FLOAT, ["N", 4])], inits)
    return save(model(g), "loop_body.onnx")


def three_inputs():
    w = (np.arange(12, dtype=np.float32) / 12).reshape(3, 4)
    nodes = [
        helper.make_node("Cast", ["tokens"], ["tf"], name="cast", to=FLOAT),
        helper.make_node("Mul", ["tf", "mask"], ["tm"], name="mul"),
        helper.make_node("Add", ["tm", "mask"], ["ta"], name="add"),
        helper.make_node("Relu", ["ta"], ["seq_out"], name="relu"),
        helper.make_node("GlobalAveragePool", ["image"], ["gp"], name="gap"),
        helper.make_node("Flatten", ["gp"], ["fl"], name="flatten"),
        helper.make_node("MatMul", ["fl", "proj"], ["img_out"],
                         name="matmul"),
    ]
    g = helper.make_graph(
        nodes, "three_inputs",
        [vi("tokens", TensorProto.INT64, ["B", "T"]),
         vi("mask", FLOAT, ["B", "T"]),
         vi("image", FLOAT, [1, 3, 224, 224])],
        [vi("seq_out", FLOAT, ["B", "T"]), vi("img_out", FLOAT, [1, 4])],
        [init("proj", w)])
    return save(model(g), "three_inputs.onnx")


def two_inputs():
    nodes = [
        helper.make_node("Add", ["a", "b"], ["s"], name="add"),
        helper.make_node("Relu", ["s"], ["out"], name="relu"),
    ]
    g = helper.make_graph(nodes, "two_inputs",
                          [vi("a", FLOAT, ["N", 3, "H", "W"]),
                           vi("b", FLOAT, ["N", 3, "H", "W"])],
                          [vi("out", FLOAT, ["N", 3, "H", "W"])])
    return save(model(g), "two_inputs.onnx")


def typed_data():
    T = TensorProto
    inits = [
        helper.make_tensor("f32", T.FLOAT, [2, 2], [1.0, -2.0, 3.5, 0.25]),
        helper.make_tensor("i8", T.INT8, [3], [-1, 2, -128]),
        helper.make_tensor("u8", T.UINT8, [3], [0, 200, 255]),
        helper.make_tensor("i16", T.INT16, [2], [-300, 32767]),
        helper.make_tensor("u16", T.UINT16, [2], [1, 65535]),
        helper.make_tensor("i32", T.INT32, [2], [-70000, 5]),
        helper.make_tensor("b", T.BOOL, [3], [True, False, True]),
        # float16 1.0 = 0x3c00, -2.0 = 0xc000 (bit patterns in int32_data)
        helper.make_tensor("f16", T.FLOAT16, [2],
                           np.array([1.0, -2.0], dtype=np.float16)),
        helper.make_tensor("i64", T.INT64, [2], [-5, 1 << 40]),
        helper.make_tensor("f64", T.DOUBLE, [2], [0.5, -1e300]),
        helper.make_tensor("u32", T.UINT32, [2], [7, 4000000000]),
        helper.make_tensor("u64", T.UINT64, [1], [1 << 63]),
        helper.make_tensor("str", T.STRING, [2], [b"ab", b""]),
        helper.make_tensor("scalar", T.INT64, [], [42]),
        helper.make_tensor("empty", T.FLOAT, [0, 3], []),
    ]
    # bfloat16 1.0 = 0x3f80, built by hand (int32_data bit patterns).
    bf = TensorProto(name="bf16", data_type=T.BFLOAT16, dims=[2])
    bf.int32_data.extend([0x3f80, 0xc000])
    inits.append(bf)
    outs = []
    nodes = []
    for t in inits:
        nodes.append(helper.make_node("Identity", [t.name], [t.name + "_out"],
                                      name="id_" + t.name))
        outs.append(vi(t.name + "_out", t.data_type, list(t.dims)))
    g = helper.make_graph(nodes, "typed_data", [], outs, inits)
    save(model(g), "typed_data.onnx", check=False)


def attrs():
    T = TensorProto
    sub = helper.make_graph(
        [helper.make_node("Neg", ["x"], ["ny"], name="neg")],
        "sub", [], [vi("ny", FLOAT, None)])
    sub2 = helper.make_graph(
        [helper.make_node("Abs", ["x"], ["ay"], name="abs")],
        "sub2", [], [vi("ay", FLOAT, None)])
    t1 = helper.make_tensor("t1", T.INT64, [3], [1, 2, 3])
    t2 = helper.make_tensor("t2", T.FLOAT, [1], [9.5])
    node = helper.make_node(
        "AllAttrs", ["x"], ["y"], name="all", domain="ai.gearc.test",
        f=1.5, i=-7, s="hello", t=t1, g=sub, floats=[0.5, 2.0],
        ints=[4, -5, 6], strings=["a", "bc"], tensors=[t1, t2],
        graphs=[sub, sub2])
    const = helper.make_node("Constant", [], ["c"], name="const",
                             value_ints=[10, 20])
    g = helper.make_graph([node, const], "attrs",
                          [vi("x", FLOAT, [2])],
                          [vi("y", FLOAT, None), vi("c", T.INT64, [2])])
    m = model(g)
    m.opset_import.append(helper.make_opsetid("ai.gearc.test", 1))
    save(m, "attrs.onnx", check=False)


def nested_ifs(levels):
    """If nested `levels` subgraph levels deep; cond and x come from the
    main graph and are referenced only at the innermost level."""
    inner = helper.make_graph(
        [helper.make_node("Identity", ["x"], ["out%d" % levels],
                          name="id%d" % levels)],
        "g%d" % levels, [], [vi("out%d" % levels, FLOAT, None)])
    for k in range(levels - 1, 0, -1):
        other = helper.make_graph(
            [helper.make_node("Constant", [], ["e%d" % k], name="c%d" % k,
                              value=helper.make_tensor("v", FLOAT, [1],
                                                       [0.0]))],
            "e%d" % k, [], [vi("e%d" % k, FLOAT, None)])
        inner = helper.make_graph(
            [helper.make_node("If", ["cond"], ["out%d" % k],
                              name="if%d" % k, then_branch=inner,
                              else_branch=other)],
            "g%d" % k, [], [vi("out%d" % k, FLOAT, None)])
    other = helper.make_graph(
        [helper.make_node("Identity", ["x"], ["e0"], name="c0")],
        "e0", [], [vi("e0", FLOAT, None)])
    g = helper.make_graph(
        [helper.make_node("If", ["cond"], ["y"], name="if0",
                          then_branch=inner, else_branch=other)],
        "nested", [vi("cond", TensorProto.BOOL, []), vi("x", FLOAT, [1])],
        [vi("y", FLOAT, [1])])
    return model(g)


def unordered():
    branch = helper.make_graph(
        [helper.make_node("Identity", ["h"], ["b_out"], name="pass")],
        "branch", [], [vi("b_out", FLOAT, None)])
    nodes = [
        helper.make_node("Neg", ["t"], ["y"], name="neg"),
        helper.make_node("If", ["cond"], ["t"], name="if",
                         then_branch=branch, else_branch=branch),
        helper.make_node("Relu", ["x"], ["h"], name="relu"),
    ]
    g = helper.make_graph(nodes, "unordered",
                          [vi("cond", TensorProto.BOOL, []),
                           vi("x", FLOAT, [4])],
                          [vi("y", FLOAT, [4])])
    save(model(g), "unordered.onnx", check=False)


# ---- malformed models -------------------------------------------------------

def small_graph(nodes, inputs=None, outputs=None, inits=(), value_info=()):
    return helper.make_graph(
        nodes, "bad",
        inputs if inputs is not None else [vi("x", FLOAT, ["N", 4])],
        outputs if outputs is not None else [vi("y", FLOAT, ["N", 4])],
        list(inits), value_info=list(value_info))


def bad_models():
    relu = helper.make_node("Relu", ["x"], ["h"], name="relu")
    save(model(small_graph([
        relu, helper.make_node("Add", ["h", "ghost"], ["y"], name="add1")])),
        "bad_dangling_input.onnx", check=False)

    branch = helper.make_graph(
        [helper.make_node("Add", ["h", "ghost"], ["t"], name="add_g")],
        "then_g", [], [vi("t", FLOAT, None)])
    save(model(small_graph([
        relu, helper.make_node("Constant", [], ["c"], name="const",
                               value=helper.make_tensor("v", TensorProto.BOOL,
                                                        [], [True])),
        helper.make_node("If", ["c"], ["y"], name="if_g",
                         then_branch=branch, else_branch=branch)])),
        "bad_dangling_subgraph.onnx", check=False)

    save(model(small_graph([
        helper.make_node("Relu", ["x"], ["h"], name="r1"),
        helper.make_node("Neg", ["x"], ["h"], name="r2"),
        helper.make_node("Relu", ["h"], ["y"], name="r3")])),
        "bad_two_producers.onnx", check=False)

    save(model(small_graph([
        helper.make_node("Add", ["x", "b"], ["a"], name="c1"),
        helper.make_node("Relu", ["a"], ["b"], name="c2"),
        helper.make_node("Relu", ["b"], ["y"], name="c3")])),
        "bad_cycle.onnx", check=False)

    save(model(small_graph(
        [relu, helper.make_node("Relu", ["h"], ["y"], name="r2")],
        value_info=[vi("h", 99, ["N", 4])])),
        "bad_dtype.onnx", check=False)

    w = init("W", np.ones(4, dtype=np.float32))
    w.data_type = 99
    save(model(small_graph(
        [helper.make_node("Add", ["x", "W"], ["y"], name="add")],
        inits=[w])), "bad_dtype_init.onnx", check=False)

    w = init("W", np.ones((4, 4), dtype=np.float32))
    w.raw_data = w.raw_data[:12]
    save(model(small_graph(
        [helper.make_node("MatMul", ["x", "W"], ["y"], name="mm")],
        inits=[w])), "bad_data_size.onnx", check=False)

    w = TensorProto(name="W", data_type=TensorProto.FLOAT, dims=[2, 3])
    w.float_data.extend([1, 2, 3, 4, 5])
    save(model(small_graph(
        [helper.make_node("MatMul", ["x", "W"], ["y"], name="mm")],
        inits=[w])), "bad_typed_count.onnx", check=False)

    save(model(small_graph(
        [helper.make_node("Relu", ["x"], ["y"], name="relu")],
        inputs=[vi("x", FLOAT, [1] * 9)])),
        "bad_rank9.onnx", check=False)

    x = vi("x", FLOAT, [2, 4])
    x.type.tensor_type.shape.dim[0].dim_value = -3
    save(model(small_graph(
        [helper.make_node("Relu", ["x"], ["y"], name="relu")], inputs=[x])),
        "bad_neg_dim.onnx", check=False)

    w = TensorProto(name="W", data_type=TensorProto.FLOAT,
                    dims=[1 << 20, 1 << 20, 1 << 10], raw_data=b"\0" * 16)
    save(model(small_graph(
        [helper.make_node("Add", ["x", "W"], ["y"], name="add")],
        inits=[w])), "bad_huge_tensor.onnx", check=False)

    w = TensorProto(name="W", data_type=TensorProto.FLOAT,
                    dims=[1 << 40, 1 << 40], raw_data=b"\0" * 16)
    save(model(small_graph(
        [helper.make_node("Add", ["x", "W"], ["y"], name="add")],
        inits=[w])), "bad_overflow_tensor.onnx", check=False)

    sp = helper.make_sparse_tensor(
        helper.make_tensor("S", FLOAT, [2], [1.0, 2.0]),
        helper.make_tensor("S_idx", TensorProto.INT64, [2], [0, 3]), [4])
    g = small_graph([helper.make_node("Add", ["x", "S"], ["y"], name="add")])
    g.sparse_initializer.append(sp)
    save(model(g), "bad_sparse.onnx", check=False)

    for name, loc, off, n in (
            ("bad_external_escape.onnx", "../external_data.bin", 0, 64),
            ("bad_external_abs.onnx", "/etc/passwd", 0, 64),
            ("bad_external_range.onnx", "external_data.bin", 500, 64)):
        w = init("W", np.ones((4, 4), dtype=np.float32))
        external_data_helper.set_external_data(w, loc, offset=off, length=n)
        w.ClearField("raw_data")
        w.data_location = TensorProto.EXTERNAL
        save(model(small_graph(
            [helper.make_node("MatMul", ["x", "W"], ["y"], name="mm")],
            inits=[w])), name, check=False)

    save(nested_ifs(65), "bad_deep_nesting.onnx", check=False)

    with open(path("demo_cnn.onnx"), "rb") as f:
        data = f.read()
    with open(path("truncated.onnx"), "wb") as f:
        f.write(data[:len(data) // 2])
    with open(path("not_onnx.onnx"), "w") as f:
        f.write("This is not an ONNX model, just some text.\n")
    with open(path("empty.onnx"), "wb"):
        pass


def main():
    os.makedirs(OUT, exist_ok=True)
    demo_cnn()
    mlp()
    external_data()
    external_misaligned()
    big_external()
    if_subgraph()
    loop_body()
    three_inputs()
    two_inputs()
    typed_data()
    attrs()
    onnx.checker.check_model(nested_ifs(3))  # the checker fails on deep nesting
    save(nested_ifs(64), "deep_nesting_64.onnx", check=False)
    unordered()
    bad_models()
    return 0


if __name__ == "__main__":
    sys.exit(main())
