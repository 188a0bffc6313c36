"""What a user does: make install then import from elsewhere, the README's
example as written, python -m gearrt against gearc run, a --hybrid file."""
import os
import re
import subprocess
import sys

import numpy as np
import pytest

import gearrt
from conftest import DEMO_ARGS, FIXTURES, ROOT, gearc


def test_make_install_then_import(tmp_path):
    """make install PREFIX=... puts a module that imports from another
    directory, libgearrt inside it."""
    prefix = tmp_path / "inst"
    subprocess.run(["make", "-s", "--no-print-directory", "install",
                    "PREFIX=%s" % prefix], cwd=ROOT, check=True,
                   stdout=subprocess.DEVNULL)
    site = prefix / "lib" / ("python%d.%d" % sys.version_info[:2]) / \
        "dist-packages"
    env = dict(os.environ, PYTHONPATH=str(site))
    r = subprocess.run([sys.executable, "-c",
                        "import gearrt; print(gearrt.__file__, "
                        "gearrt.__version__)"],
                       cwd=tmp_path, env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    path, version = r.stdout.split()
    assert path == str(site / "gearrt" / "__init__.py")
    assert version == gearrt.__version__
    assert (site / "gearrt" / "__init__.pyi").exists()


def readme_example():
    text = (ROOT / "README.md").read_text()
    m = re.search(r"^<!-- example.py -->\n```python\n(.*?)^```$", text,
                  re.S | re.M)
    assert m, "README.md has no <!-- example.py --> block"
    return m.group(1)


def test_readme_example(tmp_path):
    """The README's example, run as written where build/demo.om is the
    demo model; each print prints what its comment says."""
    code = readme_example()
    (tmp_path / "build").mkdir()
    gearc("--model=%s" % (FIXTURES / "demo_cnn.onnx"), *DEMO_ARGS,
          "--output=%s" % (tmp_path / "build" / "demo"), "-q")
    (tmp_path / "example.py").write_text(code)
    r = subprocess.run([sys.executable, "example.py"], cwd=tmp_path,
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    want = [line.split("# ", 1)[1] for line in code.splitlines()
            if line.startswith("print(") and "# " in line]
    assert want and r.stdout.splitlines() == want


@pytest.fixture(scope="module")
def hybrid_om(compile_om):
    return compile_om("demo_hybrid", FIXTURES / "demo_cnn.onnx",
                      DEMO_ARGS + ["--hybrid"])


def cli(*args):
    return subprocess.run([sys.executable, "-m", "gearrt", *args],
                          capture_output=True, text=True)


@pytest.mark.parametrize("batch, hybrid", [(4, False), (3, True), (1, True)])
def test_cli_as_gearc_run(demo_om, hybrid_om, tmp_path, batch, hybrid):
    om = hybrid_om if hybrid else demo_om
    x = np.random.default_rng(batch).random((batch, 3, 32, 32), np.float32)
    np.save(tmp_path / "x.npy", x)
    args = [om, "--input", "x=%s" % (tmp_path / "x.npy")]
    r = cli(*args, "--bench", "3")
    assert r.returncode == 0, r.stderr
    want = gearc("run", *args, "--bench=3").splitlines()
    got = r.stdout.splitlines()
    strip = re.compile(r"[0-9]+\.[0-9]+( ms)?")  # times, with or without ms
    assert [strip.sub("T", line) for line in got] == \
        [strip.sub("T", line) for line in want]
    assert got[0] == ("dynamic graph (dims 3,3,32,32, rebuilt)"
                      if batch == 3 else "gear %d (dims %d)"
                      % ([1, 4, 8].index(batch), batch))


def test_cli_strings_as_gearc_run(strings_om, tmp_path):
    """--output-dir writes string outputs as '<U' .npy files, as gearc run
    does (not as pickled object arrays)."""
    np.save(tmp_path / "text.npy", np.array(["MONDAY", "Friday", "x"]))
    args = [strings_om, "--input", "text=%s" % (tmp_path / "text.npy")]
    for d, run in (("py", cli), ("gearc", lambda *a: gearc("run", *a))):
        (tmp_path / d).mkdir()
        r = run(*args, "--output-dir=%s" % (tmp_path / d))
        if d == "py":
            assert r.returncode == 0, r.stderr
            got = r.stdout
        else:
            want = r
    assert got == want == "static graph\noutput 'upper' string [2]\n" \
        "output 'lower' string [3]\n"
    for name in ("upper", "lower"):
        a = (tmp_path / "py" / (name + ".npy")).read_bytes()
        assert a == (tmp_path / "gearc" / (name + ".npy")).read_bytes(), name
    assert np.load(tmp_path / "py" / "upper.npy").tolist() == ["FRIDAY", "X"]


def test_cli_errors(demo_om, tmp_path):
    r = cli(demo_om)
    assert r.returncode == 1
    assert r.stderr == "gearrt: error: input 'x' is not given " \
                       "(--input x=FILE.npy)\n"
    np.save(tmp_path / "x.npy", np.zeros((2, 3, 32, 32), np.float32))
    r = cli(demo_om, "--input", "x=%s" % (tmp_path / "x.npy"))
    assert r.returncode == 1 and r.stderr.startswith("gearrt: error: ")
    assert "match no gear" in r.stderr and len(r.stderr.splitlines()) == 1
    assert cli(demo_om, "--bench", "0").returncode == 2


def test_dynamic_path(hybrid_om):
    m = gearrt.Model(hybrid_om)
    assert m.has_dynamic
    s = m.session(shape_cache=1)
    x = np.random.default_rng(7).random((3, 3, 32, 32), np.float32)
    a = s.run({"x": x})["probs"]
    assert (s.last_path, s.last_gear, s.stats.last_rebuilt) == \
        ("dynamic", None, True)
    s.run({"x": x[:2]})
    s.run({"x": x})
    st = s.stats
    assert (st.dynamic_runs, st.rebuilds, st.evictions, st.cached) == \
        (3, 3, 2, 1)
    b = m.session(no_gears=True).run({"x": x})["probs"]
    assert np.array_equal(a, b)
    s.run({"x": np.zeros((4, 3, 32, 32), np.float32)})
    assert (s.last_path, s.last_gear) == ("gear", 1)
