"""gearrt: runs gearc's compiled .om models from Python (libgearrt).

    import gearrt, numpy as np
    m = gearrt.Model("demo.om")            # opened and checked once
    s = m.session(threads=1)               # any number of threads may run it
    outs = s.run({"x": np.zeros((4, 3, 32, 32), np.float32)})
    outs["probs"].shape                    # (4, 10)

Model(path): .inputs / .outputs (IOInfo: name, dtype, shape with None where
it varies with the gear, type), .gears (Gear: index, dims, outputs), .path,
.session(threads=1, shape_cache=8, no_gears=False).

Session.run(feeds) -> dict, run(None, feeds) -> list (as onnxruntime),
run(feeds, out={name: array}) writes into the caller's arrays; .last_gear,
.last_path ('gear', 'static', 'dynamic'), .stats.

Strings: a string input takes a numpy '<U' array, an object array of str
or a list of str (copied to UTF-8 for the run; bytes raise gearrt.Error);
a string output is an object array of str, as onnxruntime returns it.

Errors: gearrt.Error (a ValueError and a RuntimeError) with the library's
one-line message; gearrt.NoGearError (an Error) when the inputs' dims match
no gear.  `python -m gearrt FILE.om --input NAME=FILE.npy` runs a file as
`gearc run` does.
"""
import os as _os

# Threads that wait spin briefly, then sleep (gearrt.h, GEARRT_SPINCOUNT):
# libgomp reads its environment once, when _gearrt loads it, so the
# default goes in first; a GOMP_SPINCOUNT or OMP_WAIT_POLICY already set
# wins.  (If another module loaded libgomp before, its reading stands:
# wait_policy() says what it read.)
_SPINCOUNT = "1000"
if "GOMP_SPINCOUNT" not in _os.environ and \
        "OMP_WAIT_POLICY" not in _os.environ:
    _os.environ["GOMP_SPINCOUNT"] = _SPINCOUNT

from ._gearrt import (Error, Gear, IOInfo, Model, NoGearError,  # noqa: E402
                      Session, Stats, __version__, cpu_features,
                      usable_cores, wait_policy)

__all__ = ["Error", "Gear", "IOInfo", "Model", "NoGearError", "Session",
           "Stats", "__version__", "cpu_features", "usable_cores",
           "wait_policy"]
