"""onnxruntime's Python API over gearrt's Model and Session, so that a
script written for onnxruntime runs a compiled .om with `import gearrt as
ort` and nothing else changed (issue 41).

What differs from onnxruntime, and why:

- The file is a gearc .om, not an .onnx: gearc compiled it, its gears and
  kernels chosen ahead of time (an .onnx given raises, saying so).
- providers: 'CPUExecutionProvider' only (gearrt runs on the CPU); any
  other name raises gearrt.Error naming it, where onnxruntime warns and
  drops it: a script asking for a GPU should not quietly run elsewhere.
  provider_options are accepted and ignored.
- SessionOptions: intra_op_num_threads is honoured (0: every core the
  process may use); the rest (_IGNORED below) are accepted and ignored:
  the graph was optimised when it was compiled, runs are sequential
  within a session, gearrt writes no log, profile file or optimised model
  (GEARRT_PROFILE=1 in the environment prints per-op times instead).
- Dims that vary with the gear are named by the source's dim_param where
  the .om keeps it (a --hybrid compile), else 'gear_dim_K' for the K-th
  value of Model.gears[...].dims; an output's varying dim takes the name
  of the gear dim it equals at every gear, else '<output>_dim<axis>'.
  onnxruntime gives the .onnx's dim_param, or None.
- Inputs must have a gear's dims (or pad_batch=True, or a --hybrid file):
  other dims raise gearrt.NoGearError listing the gears.
- run_options is accepted and ignored (a run cannot be terminated).
- Errors are gearrt.Error (a ValueError and a RuntimeError) with the
  library's one-line message, not onnxruntime's pybind exceptions.
"""
import enum
import os

from ._gearrt import Error, Model

CPU = "CPUExecutionProvider"

# onnxruntime's element type names, by gearrt's dtype names.
_TYPES = {"float32": "float", "float64": "double"}


class GraphOptimizationLevel(enum.IntEnum):
    """onnxruntime's levels; accepted and ignored (gearc optimised the
    graph when it compiled it)."""
    ORT_DISABLE_ALL = 0
    ORT_ENABLE_BASIC = 1
    ORT_ENABLE_EXTENDED = 2
    ORT_ENABLE_ALL = 99


class ExecutionMode(enum.IntEnum):
    """onnxruntime's modes; accepted and ignored (a run's nodes run in
    order, each on intra_op_num_threads threads)."""
    ORT_SEQUENTIAL = 0
    ORT_PARALLEL = 1


class ExecutionOrder(enum.IntEnum):
    """onnxruntime's node orders; accepted and ignored (gearc fixed the
    order when it planned memory)."""
    DEFAULT = 0
    PRIORITY_BASED = 1
    MEMORY_EFFICIENT = 2


# Attributes onnxruntime scripts set that gearrt accepts and ignores, with
# onnxruntime's defaults.
_IGNORED = {
    "inter_op_num_threads": 0,
    "graph_optimization_level": GraphOptimizationLevel.ORT_ENABLE_ALL,
    "execution_mode": ExecutionMode.ORT_SEQUENTIAL,
    "execution_order": ExecutionOrder.DEFAULT,
    "log_severity_level": 2,
    "log_verbosity_level": 0,
    "logid": "",
    "enable_profiling": False,
    "profile_file_prefix": "onnxruntime_profile_",
    "enable_cpu_mem_arena": True,
    "enable_mem_pattern": True,
    "enable_mem_reuse": True,
    "use_deterministic_compute": False,
    "optimized_model_filepath": "",
}


class SessionOptions:
    """onnxruntime.SessionOptions: intra_op_num_threads (0, the default:
    every core the process may use) is honoured; inter_op_num_threads,
    graph_optimization_level, execution_mode, execution_order,
    log_severity_level, log_verbosity_level, logid, enable_profiling,
    profile_file_prefix, enable_cpu_mem_arena, enable_mem_pattern,
    enable_mem_reuse, use_deterministic_compute and
    optimized_model_filepath are accepted and ignored.  Any other
    attribute raises AttributeError, as onnxruntime's does."""
    __slots__ = ("intra_op_num_threads", "_config") + tuple(_IGNORED)

    def __init__(self):
        self.intra_op_num_threads = 0
        for k, v in _IGNORED.items():
            setattr(self, k, v)
        self._config = {}

    def add_session_config_entry(self, key, value):
        """Kept for get_session_config_entry; ignored otherwise."""
        self._config[str(key)] = str(value)

    def get_session_config_entry(self, key):
        try:
            return self._config[key]
        except KeyError:
            raise Error("SessionOptions: no config entry '%s'" % key) \
                from None

    def _copy(self):
        o = SessionOptions()
        for k in self.__slots__:
            setattr(o, k, getattr(self, k))
        o._config = dict(self._config)
        return o

    def __repr__(self):
        return "<gearrt.SessionOptions intra_op_num_threads=%d>" % \
            self.intra_op_num_threads


class RunOptions:
    """onnxruntime.RunOptions, accepted by run() and ignored."""
    __slots__ = ("log_severity_level", "log_verbosity_level", "logid",
                 "run_tag", "terminate", "only_execute_path_to_fetches")

    def __init__(self):
        self.log_severity_level = 2
        self.log_verbosity_level = 0
        self.logid = ""
        self.run_tag = ""
        self.terminate = False
        self.only_execute_path_to_fetches = False


class NodeArg:
    """An input or output as onnxruntime describes it: name, type
    ('tensor(float)', 'tensor(int64)', ...) and shape (a list: ints, and
    str names for the dims that vary with the gear)."""
    __slots__ = ("name", "type", "shape")

    def __init__(self, name, type, shape):
        self.name, self.type, self.shape = name, type, shape

    def __repr__(self):
        return "NodeArg(name=%r, type=%r, shape=%r)" % (
            self.name, self.type, self.shape)


class ModelMetadata:
    """What the source model said of itself, as the .om keeps it:
    producer_name, graph_name, domain and version; description,
    graph_description and custom_metadata_map are never kept ('' and
    {})."""
    __slots__ = ("producer_name", "graph_name", "domain", "description",
                 "graph_description", "version", "custom_metadata_map")

    def __init__(self, meta):
        self.producer_name = meta["producer_name"]
        self.graph_name = meta["graph_name"]
        self.domain = meta["domain"]
        self.description = ""
        self.graph_description = ""
        self.version = int(meta["model_version"] or 0)
        self.custom_metadata_map = {}


def get_available_providers():
    """['CPUExecutionProvider']: gearrt runs on the CPU."""
    return [CPU]


def get_all_providers():
    return [CPU]


def get_device():
    return "CPU"


def set_default_logger_severity(level):
    """Accepted and ignored: gearrt writes no log."""


def _providers(providers, provider_options):
    """Checks onnxruntime's providers argument: names or (name, options)
    pairs, 'CPUExecutionProvider' only."""
    if providers is None:
        if provider_options is not None:
            raise ValueError("provider_options given without providers")
        return
    if isinstance(providers, str):
        raise TypeError("providers: expected a list of provider names, "
                        "got a str")
    providers = list(providers)
    if provider_options is not None and \
            len(list(provider_options)) != len(providers):
        raise ValueError("'providers' and 'provider_options' should be the "
                         "same length if both are given.")
    for p in providers:
        name = p[0] if isinstance(p, tuple) else p
        if name != CPU:
            raise Error("provider '%s' is not available: gearrt runs on "
                        "the CPU only (providers: ['%s'])" % (name, CPU))


def _threads(threads, options):
    n = int(options.intra_op_num_threads)
    if threads and n and threads != n:
        raise ValueError("threads=%d and sess_options.intra_op_num_threads="
                         "%d disagree" % (threads, n))
    return threads or n


def _open(path_or_bytes):
    if isinstance(path_or_bytes, (bytes, bytearray, memoryview)):
        return Model.from_bytes(path_or_bytes)
    path = os.fspath(path_or_bytes)
    try:
        return Model(path)
    except Error as e:
        if str(path).endswith(".onnx"):
            raise Error("%s (gearrt runs gearc's compiled .om files: "
                        "compile it first, gearc --model=%s "
                        "--output=NAME)" % (e, path)) from None
        raise


def _column(model, k):
    """Gear dim k's value at every gear."""
    return tuple(g.dims[k] if k < len(g.dims) else None for g in model.gears)


def _input_shapes(model):
    """Every input's shape as onnxruntime gives it, and the names given to
    the gear dims in order (see the module's docstring)."""
    shapes, names = [], []
    for info, given in zip(model.inputs, model.input_dim_names):
        shape = []
        for axis, d in enumerate(info.shape):
            if d is not None:
                shape.append(d)
                continue
            k = len(names)
            name = given[axis] if axis < len(given) else None
            if name is None:
                same = [j for j in range(k) if model.gears and
                        _column(model, j) == _column(model, k)]
                name = names[same[0]] if same else "gear_dim_%d" % k
            names.append(name)
            shape.append(name)
        shapes.append(shape)
    return shapes, names


def _output_shape(model, info, names):
    shape = []
    for axis, d in enumerate(info.shape):
        if d is not None:
            shape.append(d)
            continue
        at = tuple(g.outputs[info.name][axis] for g in model.gears)
        same = [k for k in range(len(names)) if _column(model, k) == at]
        shape.append(names[same[0]] if same and model.gears
                     else "%s_dim%d" % (info.name, axis))
    return shape


def _type(info):
    return "tensor(%s)" % _TYPES.get(info.type, info.type)


class InferenceSession:
    """onnxruntime.InferenceSession over a gearc .om file.

        import gearrt as ort
        sess = ort.InferenceSession("model.om",
                                    providers=["CPUExecutionProvider"])
        x = sess.get_inputs()[0]
        y = sess.run(None, {x.name: data})[0]

    path_or_bytes     the .om's path (str or os.PathLike), or its bytes
                      (bytes, bytearray, memoryview).
    sess_options      a SessionOptions (intra_op_num_threads honoured).
    providers         None or ['CPUExecutionProvider'] (names or (name,
                      options) pairs); any other provider raises.
    provider_options  accepted and ignored.
    threads           intra-op threads; 0 (the default) takes
                      sess_options.intra_op_num_threads, whose 0 means
                      every core the process may use.
    pad_batch         run a batch no gear has on the least gear that
                      holds it, zero rows added and the outputs sliced
                      back, where the compiler proved the batch rows
                      independent; elsewhere gearrt.NoGearError names the
                      node mixing them.
    shape_cache, concurrency   as Model.session's.

    run() may be called from any number of threads at once; each returns
    fresh arrays.  .model and .session are the gearrt Model and Session
    underneath (gears, last_gear, stats, prepare())."""

    def __init__(self, path_or_bytes, sess_options=None, providers=None,
                 provider_options=None, *, threads=0, pad_batch=False,
                 shape_cache=8, concurrency=0, disabled_optimizers=None):
        if sess_options is not None and \
                not isinstance(sess_options, SessionOptions):
            raise TypeError("sess_options: expected a gearrt.SessionOptions"
                            ", got %s" % type(sess_options).__name__)
        _providers(providers, provider_options)
        options = sess_options._copy() if sess_options else SessionOptions()
        options.intra_op_num_threads = _threads(threads, options)
        self._options = options
        self.model = _open(path_or_bytes)
        self.session = self.model.session(
            threads=options.intra_op_num_threads, shape_cache=shape_cache,
            pad_batch=pad_batch, concurrency=concurrency)
        shapes, names = _input_shapes(self.model)
        self._inputs = [NodeArg(i.name, _type(i), s)
                        for i, s in zip(self.model.inputs, shapes)]
        self._outputs = [NodeArg(o.name, _type(o),
                                 _output_shape(self.model, o, names))
                         for o in self.model.outputs]
        self._run = self.session.run

    def run(self, output_names, input_feed, run_options=None):
        """The outputs named (None or []: every output, in the model's
        order) as a list of fresh numpy arrays, from input_feed (a dict:
        input name -> array).  An unknown input or output name, a missing
        input, a wrong dtype, rank or dims raise gearrt.Error naming it;
        dims that match no gear gearrt.NoGearError."""
        if run_options is not None and not isinstance(run_options,
                                                      RunOptions):
            raise TypeError("run_options: expected a gearrt.RunOptions, "
                            "got %s" % type(run_options).__name__)
        if not isinstance(input_feed, dict):
            input_feed = dict(input_feed)
        return self._run(output_names or None, input_feed)

    def get_inputs(self):
        return list(self._inputs)

    def get_outputs(self):
        return list(self._outputs)

    def get_overridable_initializers(self):
        """[]: a compiled model's weights are fixed."""
        return []

    def get_modelmeta(self):
        return ModelMetadata(self.model.meta)

    def get_providers(self):
        return [CPU]

    def get_provider_options(self):
        return {CPU: {}}

    def get_session_options(self):
        """The options the session was made with (a copy; its
        intra_op_num_threads the one used, 0 for every core)."""
        return self._options._copy()

    def set_providers(self, providers=None, provider_options=None):
        """Checks the providers as the constructor does; the session is
        already on the CPU."""
        _providers(providers, provider_options)

    def disable_fallback(self):
        """Accepted: there is nothing to fall back to."""

    def enable_fallback(self):
        """Accepted: there is nothing to fall back to."""

    def __repr__(self):
        return "<gearrt.InferenceSession %r>" % self.model.path
