"""gearrt's outputs against `gearc run`'s (bit for bit, same library, one
thread) and against ONNX Runtime's committed outputs for the real-export
fixtures (tests/fixtures/ort, rtol 1e-4 / atol 1e-5 as
tests/test_runtime_ort.c)."""
import re

import numpy as np
import pytest

import gearrt
from conftest import ORT, gearc, ort_cases


def escape(name):
    """A name as `gearc run --output-dir` writes it (cli/run.c)."""
    return re.sub(r"[^A-Za-z0-9._-]",
                  lambda c: "".join("%%%02x" % b for b in c.group().encode()),
                  name)


def gearc_run(om, feeds, tmp_path):
    """`gearc run` on feeds: (its stdout, dict name -> output)."""
    args = []
    for name, v in feeds.items():
        p = tmp_path / ("in_" + escape(name) + ".npy")
        np.save(p, v)
        args.append("--input=%s=%s" % (name, p))
    d = tmp_path / "out"
    d.mkdir(exist_ok=True)
    text = gearc("run", om, *args, "--output-dir=%s" % d)
    m = gearrt.Model(om)
    return text, {o.name: np.load(d / (escape(o.name) + ".npy"))
                  for o in m.outputs}


@pytest.mark.parametrize("batch", [1, 4, 8])
def test_demo_equals_gearc_run(demo_om, tmp_path, batch):
    x = np.random.default_rng(batch).random((batch, 3, 32, 32), np.float32)
    x -= 0.5
    text, want = gearc_run(demo_om, {"x": x}, tmp_path)
    got = gearrt.Model(demo_om).session().run({"x": x})
    assert np.array_equal(got["probs"], want["probs"])
    assert text.startswith("gear %d (dims %d)\n" % ([1, 4, 8].index(batch),
                                                     batch))


CASES = [(c, g["index"]) for c, v in ort_cases().items() for g in v["gears"]]


@pytest.mark.parametrize("case, gear", CASES,
                         ids=["%s-gear%d" % c for c in CASES])
def test_real_exports(ort_om, tmp_path, case, gear):
    om = ort_om(case)
    m = gearrt.Model(om)
    folder = ORT / case / ("gear%d" % gear)
    feeds = {i.name: np.load(folder / ("input_%s.npy" % escape(i.name)))
             for i in m.inputs}
    s = m.session()
    got = s.run(feeds)
    assert s.last_gear == gear and s.last_path == "gear"
    _, cli = gearc_run(om, feeds, tmp_path)
    for o in m.outputs:
        ort = np.load(folder / ("output_%s.npy" % escape(o.name)))
        y = got[o.name]
        assert y.dtype == ort.dtype and y.shape == ort.shape, o.name
        assert y.shape == m.gears[gear].outputs[o.name]
        np.testing.assert_allclose(y, ort, rtol=1e-4, atol=1e-5,
                                   err_msg="%s %s" % (case, o.name))
        assert np.array_equal(y, cli[o.name]), o.name
