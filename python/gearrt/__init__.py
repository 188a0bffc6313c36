"""gearrt: runs gearc's compiled .om models from Python (libgearrt).

As onnxruntime does (an unchanged onnxruntime script runs, the file aside):

    import gearrt as ort, numpy as np
    sess = ort.InferenceSession("demo.om", providers=["CPUExecutionProvider"])
    x = sess.get_inputs()[0]               # NodeArg: name, type, shape
    probs = sess.run(None, {x.name: np.zeros((4, 3, 32, 32), np.float32)})[0]

InferenceSession(path_or_bytes, sess_options=None, providers=None,
provider_options=None, *, threads=0, pad_batch=False): get_inputs(),
get_outputs() (NodeArg: name, type 'tensor(float)' ..., shape with str
names where dims vary with the gear), run(output_names, input_feed,
run_options=None) -> list, get_modelmeta(), get_providers(),
get_session_options(); SessionOptions (intra_op_num_threads honoured, the
rest accepted and ignored), RunOptions, GraphOptimizationLevel,
ExecutionMode, ExecutionOrder, get_available_providers().  See
gearrt._ort's docstring for what differs from onnxruntime.

gearrt's own API, underneath:

    m = gearrt.Model("demo.om")            # opened and checked once
    s = m.session(threads=1)               # any number of threads may run it
    outs = s.run({"x": np.zeros((4, 3, 32, 32), np.float32)})
    outs["probs"].shape                    # (4, 10)

Model(path) or Model.from_bytes(data): .inputs / .outputs (IOInfo: name,
dtype, shape with None where it varies with the gear, type), .gears (Gear:
index, dims, outputs), .meta, .input_dim_names, .path,
.session(threads=1, shape_cache=8, no_gears=False, pad_batch=False,
concurrency=0).

Session.run(feeds) -> dict, run(None, feeds) -> list (as onnxruntime),
run(feeds, out={name: array}) writes into the caller's arrays; .last_gear,
.last_path ('gear', 'static', 'dynamic'), .stats, .prepare().  Any number
of threads may run one session (or InferenceSession) at once; outputs are
fresh arrays the caller owns; close() while a run is under way raises.

Strings: a string input takes a numpy '<U' array, an object array of str
or a list of str (copied to UTF-8 for the run; bytes raise gearrt.Error);
a string output is an object array of str, as onnxruntime returns it.

Errors: gearrt.Error (a ValueError and a RuntimeError) with the library's
one-line message; gearrt.NoGearError (an Error) when the inputs' dims match
no gear.  `python -m gearrt FILE.om --input NAME=FILE.npy` runs a file as
`gearc run` does.
"""
import os as _os

# The threads of a run are gearrt's own pool, oneDNN's regions on it too
# (gearrt.h, gearrt_wait_policy).  Only where oneDNN stays on libgomp
# (GEARRT_DNNL_LIBGOMP=1) does libgomp's policy count: it reads its
# environment once, when _gearrt loads it, so gearrt's default
# (GEARRT_SPINCOUNT: spin briefly, then sleep) goes in first; a
# GOMP_SPINCOUNT or OMP_WAIT_POLICY already set wins.
_SPINCOUNT = "1000"
if "GOMP_SPINCOUNT" not in _os.environ and \
        "OMP_WAIT_POLICY" not in _os.environ:
    _os.environ["GOMP_SPINCOUNT"] = _SPINCOUNT

from ._gearrt import (Error, Gear, IOInfo, Model, NoGearError,  # noqa: E402
                      Session, Stats, __version__, cpu_features,
                      usable_cores, wait_policy)
from ._ort import (ExecutionMode, ExecutionOrder,  # noqa: E402
                   GraphOptimizationLevel, InferenceSession, ModelMetadata,
                   NodeArg, RunOptions, SessionOptions, get_all_providers,
                   get_available_providers, get_device,
                   set_default_logger_severity)

__all__ = ["Error", "Gear", "IOInfo", "Model", "NoGearError", "Session",
           "Stats", "__version__", "cpu_features", "usable_cores",
           "wait_policy",
           "ExecutionMode", "ExecutionOrder", "GraphOptimizationLevel",
           "InferenceSession", "ModelMetadata", "NodeArg", "RunOptions",
           "SessionOptions", "get_all_providers", "get_available_providers",
           "get_device", "set_default_logger_severity"]
