"""String tensors: inputs from numpy '<U' arrays, object arrays of str and
lists of str; outputs as object arrays of str (as onnxruntime returns
them), equal to `gearc run`'s '<U' .npy files; the errors."""
import gc
import tracemalloc

import numpy as np
import pytest

import gearrt
from test_outputs import gearc_run

WORDS = ["Monday", "tuesday", "Wed"]


def test_describe(strings_om):
    m = gearrt.Model(strings_om)
    (text,), (upper, lower) = m.inputs, m.outputs
    assert (text.name, text.dtype, text.shape, text.type) == \
        ("text", np.dtype(object), (3,), "string")
    assert (upper.name, upper.dtype, upper.shape, upper.type) == \
        ("upper", np.dtype(object), (None,), "string")
    assert (lower.shape, lower.type) == ((3,), "string")


@pytest.mark.parametrize("words", [WORDS, ["MONDAY", "Friday", "x"],
                                   ["monday", "MONDAY", "Monday"],
                                   ["", "a b", "z" * 1000]],
                         ids=["mixed", "stopword", "all-stopwords", "sizes"])
def test_equals_gearc_run(strings_om, tmp_path, words):
    text = np.array(words)
    assert text.dtype.kind == "U"
    _, want = gearc_run(strings_om, {"text": text}, tmp_path)
    s = gearrt.Model(strings_om).session()
    got = s.run({"text": text})
    for name in ("upper", "lower"):
        assert want[name].dtype.kind == "U"
        assert got[name].dtype == object, name
        assert all(type(w) is str for w in got[name]), name
        assert got[name].shape == want[name].shape, name
        assert got[name].tolist() == want[name].tolist(), name
    assert got["lower"].tolist() == [w.lower() for w in words]


def test_input_forms(strings_om):
    """'<U' (either byte order, strided), object arrays of str (and of
    numpy.str_), lists: one result."""
    s = gearrt.Model(strings_om).session()
    want = s.run({"text": np.array(WORDS)})
    wide = np.array(["Monday", "-", "tuesday", "-", "Wed", "-"])
    for v in (np.array(WORDS, dtype=object), WORDS,
              np.array(WORDS).astype(">U7"), wide[::2],
              wide.astype(object)[::2], tuple(WORDS),
              np.array([np.str_(w) for w in WORDS], dtype=object)):
        got = s.run({"text": v})
        for name, y in want.items():
            assert got[name].tolist() == y.tolist(), (name, v)
    (upper, lower) = s.run(None, {"text": WORDS})
    assert upper.tolist() == ["TUESDAY", "WED"]
    assert lower.tolist() == ["monday", "tuesday", "wed"]


def test_outputs_are_the_callers(strings_om):
    """Each run's strings are new str objects: the next run (which reuses
    the session's memory) leaves them alone."""
    s = gearrt.Model(strings_om).session()
    a = s.run({"text": WORDS})
    s.run({"text": ["x" * 50, "y", "z"]})
    assert a["lower"].tolist() == ["monday", "tuesday", "wed"]


def test_non_ascii_survives(dtypes_om):
    """Every code point's UTF-8 length (1..4 bytes) through the dtypes
    model's string Identity, fed as '<U' and as object arrays."""
    m = gearrt.Model(dtypes_om)
    s = m.session()
    text = np.array([["naïve", "日本語", "\U0001F600 ok"],
                     ["Ωmega", "", "z\u00e9\u4e2d\U00010348"]])
    feeds = {i.name: np.zeros((2, 3), np.uint16 if i.type == "bfloat16"
                              else i.dtype) for i in m.inputs}
    for v in (text, text.astype(object)):
        feeds["x_string"] = v
        y = s.run(feeds)["y_string"]
        assert y.dtype == object and y.tolist() == text.tolist()
        assert y[0, 2].encode() == b"\xf0\x9f\x98\x80 ok"


@pytest.mark.parametrize("text, message", [
    (np.array(["a", 1, "c"], dtype=object),
     r"^input 'text': element 1 is int, expected str$"),
    (np.array(["a", "b", None], dtype=object),
     r"^input 'text': element 2 is NoneType, expected str$"),
    (np.array(["a", b"b", "c"], dtype=object),
     r"^input 'text': element 1 is bytes, expected str \(decode bytes "
     r"first\)$"),
    ([b"a", b"b", b"c"], r"element 0 is bytes, expected str"),
    (np.array([b"a", b"b", b"c"]),
     r"^input 'text': numpy dtype dtype\('S1'\) has no gearrt dtype "
     r"\(expected string\): bytes are not strings, decode them to str$"),
    (np.array(["a", "b\0c", "d"]),
     r"^input 'text': string element 1 holds U\+0000, which a C string "
     r"cannot hold$"),
    (np.array(["a", "b\0c", "d"], dtype=object),
     r"^input 'text': string element 1 holds U\+0000"),
    (np.array(["a", "b", "\ud800"]),
     r"^input 'text': string element 2 holds U\+D800, which is no Unicode "
     r"scalar value$"),
    (np.array(["a", "b", "\ud800"], dtype=object),
     r"^input 'text': string element 2 holds a surrogate"),
    (np.zeros(3, np.float32), r"^input 'text': dtype float32, expected "
                              r"string$"),
    (np.array(["a", "b"]), r"^input 'text': shape \[2\], expected \[3\]$"),
], ids=["int", "None", "bytes-object", "bytes-list", "bytes-S", "NUL-U",
        "NUL-object", "surrogate-U", "surrogate-object", "float", "shape"])
def test_errors(strings_om, text, message):
    s = gearrt.Model(strings_om).session()
    with pytest.raises(gearrt.Error, match=message):
        s.run({"text": text})
    assert s.run({"text": WORDS})["lower"].tolist() == \
        ["monday", "tuesday", "wed"]


def test_strings_for_a_number_input(demo_om):
    s = gearrt.Model(demo_om).session()
    with pytest.raises(gearrt.Error,
                       match=r"^input 'x': dtype string, expected float32$"):
        s.run({"x": np.full((1, 3, 32, 32), "a")})


def test_out_is_refused(strings_om):
    s = gearrt.Model(strings_om).session()
    with pytest.raises(gearrt.Error, match=r"^out 'lower': a string output "
                       r"is returned as a new object array of str"):
        s.run({"text": WORDS}, out={"lower": np.empty(3, object)})


def test_run_buffers_are_freed(strings_om):
    """The UTF-8 copies of the inputs live for the run only: the traced
    memory after runs (their results dropped) is what it was before, for
    runs that succeed, fail in the library (StringNormalizer maps no case
    beyond ASCII) or fail on a later element."""
    s = gearrt.Model(strings_om).session()
    good = np.array(["a" * 100000, "b" * 100000, "c"])
    fails = np.array(["\u00e9" * 100000, "b" * 100000, "c"])
    bad = np.array(["\u00e9" * 100000, "b" * 100000, 3], dtype=object)

    def runs():
        r = s.run({"text": good})
        del r
        for v in (fails, bad):
            with pytest.raises(gearrt.Error):
                s.run({"text": v})

    runs()  # bad's str caches its UTF-8 once (CPython's own)
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    for _ in range(5):
        runs()
    gc.collect()
    after, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak - before >= 200000  # the UTF-8 copies, the results
    assert after - before < 10000, after - before
