"""Fixtures for the gearrt tests: .om files compiled once per test run.

GEARC (default build/gearc) compiles; PYTHONPATH must reach the module
(make python-check sets both).
"""
import json
import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"
ORT = FIXTURES / "ort"
GEARC = os.environ.get("GEARC", str(ROOT / "build" / "gearc"))

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from gen_dtypes import DTYPES  # noqa: E402

# The demo model as `make demo` compiles it.
DEMO_ARGS = ["--input_shape=x:-1,3,32,32", "--dynamic_batch_size=1,4,8"]
DTYPE_ARGS = ["--input_shape=" + ";".join("x_%s:2,-1" % d for d in DTYPES),
              "--dynamic_dims=" + ";".join(",".join([n] * len(DTYPES))
                                           for n in ("3", "5"))]


def ort_cases():
    """tests/fixtures/ort/index.json: case -> model, args, gears."""
    return json.loads((ORT / "index.json").read_text())


def gearc(*args):
    """Runs gearc; returns its stdout (raises with stderr on failure)."""
    r = subprocess.run([GEARC, *args], capture_output=True, text=True)
    if r.returncode:
        raise AssertionError("gearc %s: %s" % (" ".join(args), r.stderr))
    return r.stdout


@pytest.fixture(scope="session")
def omdir(tmp_path_factory):
    return tmp_path_factory.mktemp("om")


@pytest.fixture(scope="session")
def compile_om(omdir):
    """compile_om(name, model, args) -> path of NAME.om, compiled once."""
    def compile_(name, model, args):
        out = omdir / name
        om = omdir / (name + ".om")
        if not om.exists():
            gearc("--model=%s" % model, *args, "--output=%s" % out, "-q")
        return str(om)
    return compile_


@pytest.fixture(scope="session")
def demo_om(compile_om):
    return compile_om("demo", FIXTURES / "demo_cnn.onnx", DEMO_ARGS)


@pytest.fixture(scope="session")
def dtypes_om(compile_om):
    return compile_om("dtypes", pathlib.Path(__file__).parent / "dtypes.onnx",
                      DTYPE_ARGS)


@pytest.fixture(scope="session")
def ort_om(compile_om):
    """ort_om(case) -> the case's .om, compiled with index.json's args."""
    cases = ort_cases()
    return lambda case: compile_om("ort_" + case,
                                   FIXTURES / cases[case]["model"],
                                   cases[case]["args"])


@pytest.fixture(scope="session")
def strings_om(compile_om):
    """tests/fixtures/strings.onnx: text string [3] -> upper (StringNormalizer
    UPPER, stopword 'monday': [n], n from the data), lower (LOWER, [3])."""
    return compile_om("strings", FIXTURES / "strings.onnx", [])
