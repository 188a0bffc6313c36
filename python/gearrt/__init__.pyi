# Type stubs for gearrt (python/gearrt/_gearrt.c).
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
