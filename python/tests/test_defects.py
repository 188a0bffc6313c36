"""Issue 39's defects as the Python module meets them: bool inputs of any
byte (any but 0 is true, as through the C API) and a hostile size that is
an exception, not the end of the interpreter."""
import numpy as np
import pytest

import gearrt
from conftest import FIXTURES

DEFECTS = FIXTURES / "defects"


def test_bool_input_of_any_byte(compile_om):
    om = compile_om("bool_bytes", DEFECTS / "bool_bytes.onnx", [])
    raw = np.array([0, 255, 1, 2, 0, 128, 7, 0, 1, 0, 64, 3, 0, 0, 1, 254],
                   np.uint8)
    want = raw != 0
    out = gearrt.Model(om).session().run({"b": raw.view(np.bool_)})
    assert np.array_equal(out["u8"], want.astype(np.uint8))
    assert np.array_equal(out["eq"], want)
    assert np.array_equal(out["nb"], ~want)
    assert np.array_equal(out["wh"], np.where(want, 1.0, 2.0))
    assert raw[1] == 255  # the caller's array is left as it was


def test_too_large_a_tensor_is_an_exception(compile_om):
    om = compile_om("huge_alloc", DEFECTS / "huge_alloc.onnx", [])
    s = gearrt.Model(om).session()
    feeds = {"s": np.array([1 << 16] * 3, np.int64),
             "x": np.ones((1, 1), np.float32),
             "e": np.array([2, 3], np.int64)}
    with pytest.raises(gearrt.Error,
                       match=r"\(ConstantOfShape\): cannot allocate "
                             r"1125899906842624 bytes"):
        s.run(feeds)
    feeds["s"] = np.array([2, 2, 2], np.int64)
    out = s.run(feeds)  # the session goes on
    assert out["y"].shape == (2, 2, 2) and out["ex"].shape == (2, 3)
