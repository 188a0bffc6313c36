# Type stubs for gearrt (python/gearrt/_gearrt.c).
import enum
import os
from typing import Any, Dict, List, Mapping, NamedTuple, Optional, Sequence, Tuple, Union, overload

import numpy as np
import numpy.typing as npt

__version__: str

class Error(ValueError, RuntimeError):
    """A libgearrt call failed; the message is the library's one line."""

class NoGearError(Error):
    """The inputs' dims match no gear; the message lists the gears."""

class IOInfo(NamedTuple):
    name: str
    # numpy's; uint16 for bfloat16, object for string (type 'string')
    dtype: np.dtype
    shape: Tuple[Optional[int], ...]
    type: str

class Gear(NamedTuple):
    index: int
    dims: Tuple[int, ...]
    outputs: Dict[str, Tuple[int, ...]]

class Stats(NamedTuple):
    runs: int
    gear_runs: int
    dynamic_runs: int
    rebuilds: int
    cache_hits: int
    evictions: int
    cached: int
    last_rebuilt: bool
    last_rebuild_ms: float
    prepare_ms: float

# A string input: a '<U' array, an object array of str or a list of str
# (copied to UTF-8 for the run; bytes are refused).
Feeds = Mapping[str, npt.ArrayLike]

class Session:
    @property
    def model(self) -> Model: ...
    @property
    def last_gear(self) -> Optional[int]: ...
    @property
    def last_path(self) -> Optional[str]: ...
    @property
    def stats(self) -> Stats: ...
    # A string output is an object array of str (as onnxruntime returns it);
    # out= takes no string output.
    @overload
    def run(self, feeds: Feeds, *,
            out: Optional[Mapping[str, np.ndarray]] = ...) -> Dict[str, np.ndarray]: ...
    @overload
    def run(self, output_names: Optional[Sequence[str]], feeds: Feeds, *,
            out: Optional[Mapping[str, np.ndarray]] = ...) -> List[np.ndarray]: ...
    def prepare(self, gears: Optional[Sequence[int]] = ...) -> None: ...
    def close(self) -> None: ...
    def __enter__(self) -> Session: ...
    def __exit__(self, *exc: Any) -> None: ...

class Model:
    path: str  # '<memory>' for from_bytes
    inputs: Tuple[IOInfo, ...]
    outputs: Tuple[IOInfo, ...]
    gears: Tuple[Gear, ...]
    # per input, per axis: the source's dim_param where the file keeps it
    # (a --hybrid compile), else None
    input_dim_names: Tuple[Tuple[Optional[str], ...], ...]
    def __init__(self, path: Union[str, bytes, "os.PathLike[str]"]) -> None: ...
    @classmethod
    def from_bytes(cls, data: Union[bytes, bytearray, memoryview]) -> Model: ...
    @property
    def closed(self) -> bool: ...
    @property
    def has_dynamic(self) -> bool: ...
    # producer_name, producer_version, domain, model_version, graph_name,
    # source_file ('' where the source said nothing)
    @property
    def meta(self) -> Dict[str, str]: ...
    def session(self, threads: int = ..., shape_cache: int = ...,
                no_gears: bool = ..., pad_batch: bool = ...,
                concurrency: int = ...) -> Session: ...
    def close(self) -> None: ...
    def __enter__(self) -> Model: ...
    def __exit__(self, *exc: Any) -> None: ...

def cpu_features() -> str: ...
def wait_policy() -> str: ...
def usable_cores() -> int: ...

# ---- onnxruntime's API (gearrt/_ort.py) -------------------------------------

class GraphOptimizationLevel(enum.IntEnum):  # accepted and ignored
    ORT_DISABLE_ALL = 0
    ORT_ENABLE_BASIC = 1
    ORT_ENABLE_EXTENDED = 2
    ORT_ENABLE_ALL = 99

class ExecutionMode(enum.IntEnum):  # accepted and ignored
    ORT_SEQUENTIAL = 0
    ORT_PARALLEL = 1

class ExecutionOrder(enum.IntEnum):  # accepted and ignored
    DEFAULT = 0
    PRIORITY_BASED = 1
    MEMORY_EFFICIENT = 2

class SessionOptions:
    intra_op_num_threads: int  # honoured; 0: every core the process may use
    # accepted and ignored:
    inter_op_num_threads: int
    graph_optimization_level: GraphOptimizationLevel
    execution_mode: ExecutionMode
    execution_order: ExecutionOrder
    log_severity_level: int
    log_verbosity_level: int
    logid: str
    enable_profiling: bool
    profile_file_prefix: str
    enable_cpu_mem_arena: bool
    enable_mem_pattern: bool
    enable_mem_reuse: bool
    use_deterministic_compute: bool
    optimized_model_filepath: str
    def __init__(self) -> None: ...
    def add_session_config_entry(self, key: str, value: str) -> None: ...
    def get_session_config_entry(self, key: str) -> str: ...

class RunOptions:  # accepted by run() and ignored
    log_severity_level: int
    log_verbosity_level: int
    logid: str
    run_tag: str
    terminate: bool
    only_execute_path_to_fetches: bool
    def __init__(self) -> None: ...

class NodeArg:
    name: str
    type: str  # 'tensor(float)', 'tensor(int64)', 'tensor(string)', ...
    # ints, and names where a dim varies with the gear: the source's
    # dim_param where the .om keeps it, else 'gear_dim_K' ('<output>_dimA'
    # for an output dim equal to no gear dim)
    shape: List[Union[int, str]]
    def __init__(self, name: str, type: str,
                 shape: List[Union[int, str]]) -> None: ...

class ModelMetadata:
    producer_name: str
    graph_name: str
    domain: str
    description: str  # never kept: ''
    graph_description: str  # never kept: ''
    version: int
    custom_metadata_map: Dict[str, str]  # never kept: {}

ProviderArg = Union[str, Tuple[str, Dict[Any, Any]]]

class InferenceSession:
    model: Model
    session: Session
    def __init__(self,
                 path_or_bytes: Union[str, "os.PathLike[str]", bytes,
                                      bytearray, memoryview],
                 sess_options: Optional[SessionOptions] = ...,
                 providers: Optional[Sequence[ProviderArg]] = ...,
                 provider_options: Optional[Sequence[Dict[Any, Any]]] = ...,
                 *, threads: int = ..., pad_batch: bool = ...,
                 shape_cache: int = ..., concurrency: int = ...,
                 disabled_optimizers: Any = ...) -> None: ...
    def run(self, output_names: Optional[Sequence[str]], input_feed: Feeds,
            run_options: Optional[RunOptions] = ...) -> List[np.ndarray]: ...
    def get_inputs(self) -> List[NodeArg]: ...
    def get_outputs(self) -> List[NodeArg]: ...
    def get_overridable_initializers(self) -> List[NodeArg]: ...
    def get_modelmeta(self) -> ModelMetadata: ...
    def get_providers(self) -> List[str]: ...
    def get_provider_options(self) -> Dict[str, Dict[Any, Any]]: ...
    def get_session_options(self) -> SessionOptions: ...
    def set_providers(self, providers: Optional[Sequence[ProviderArg]] = ...,
                      provider_options: Optional[Sequence[Dict[Any, Any]]] = ...) -> None: ...
    def disable_fallback(self) -> None: ...
    def enable_fallback(self) -> None: ...

def get_available_providers() -> List[str]: ...
def get_all_providers() -> List[str]: ...
def get_device() -> str: ...
def set_default_logger_severity(level: int) -> None: ...
