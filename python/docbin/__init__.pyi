# Types of the docbin package. The TypedDicts (_Times, _Metrics, ...) exist for type checkers
# only: they describe the dicts the calls return.
from typing import Any, Iterable, Literal, Optional, Tuple, TypedDict, Union, overload

import numpy as np
import numpy.typing as npt

__version__: str
__all__ = ["Context", "Error", "DeviceError", "binarize", "evaluate", "devices", "algorithms", "__version__"]

class Error(Exception):
    """A docbin failure that is not a bad argument."""

class DeviceError(Error):
    """No device for a role the map names, a device spec that matches none or several, or an OpenCL failure."""

class _StageTime(TypedDict):
    stage: str
    role: Literal["cpu", "gpu"]
    ms: float

class _Times(TypedDict):
    map: str
    chosen_by: Literal["given", "wisdom", "estimate", "measure"]
    wall_ms: float
    stages: list[_StageTime]
    copy_ms: float
    copy_bytes: int

class _Device(TypedDict):
    spec: str
    platform: str
    name: str
    type: Literal["cpu", "gpu", "accelerator", "other"]
    driver: str
    compute_units: int
    memory: int
    roles: list[Literal["cpu", "gpu"]]

class _Param(TypedDict):
    doc: str
    kind: Literal["real", "int", "odd int", "word"]
    default: Union[int, float, str]
    min: Optional[Union[int, float]]
    max: Optional[Union[int, float]]
    choices: Optional[list[Union[int, float, str]]]

class _Algorithm(TypedDict):
    name: str
    doc: str
    stages: list[Tuple[str, str]]
    params: dict[str, _Param]
    variants: list[str]

class _Metrics(TypedDict):
    fmeasure: float
    precision: float
    recall: float
    pseudo_fmeasure: float
    pseudo_precision: float
    pseudo_recall: float
    psnr: float
    drd: float
    nrm: float
    mcc: float
    accuracy: float
    tp: int
    tn: int
    fp: int
    fn: int
    nubn: int
    drd_sum: int

_Image = npt.ArrayLike
_Value = Union[int, float, str]

class Context:
    def __init__(self, cpu_device: Optional[str] = ..., gpu_device: Optional[str] = ...) -> None: ...
    @overload
    def binarize(self, image: _Image, algo: str, *, map: Optional[str] = ..., out: Optional[npt.NDArray[np.uint8]] = ...,
                 dtype: Any = ..., times: Literal[False] = ..., **params: _Value) -> np.ndarray: ...
    @overload
    def binarize(self, image: _Image, algo: str, *, map: Optional[str] = ..., out: Optional[npt.NDArray[np.uint8]] = ...,
                 dtype: Any = ..., times: Literal[True], **params: _Value) -> Tuple[np.ndarray, _Times]: ...
    def binarize_files(self, inputs: Union[str, Iterable[str]], out_dir: str, algo: str, *, map: Optional[str] = ...,
                       format: Literal["png", "pbm", "pgm", "pnm"] = ..., **params: _Value) -> None: ...
    def devices(self) -> list[_Device]: ...
    def close(self) -> None: ...
    def __enter__(self) -> "Context": ...
    def __exit__(self, *exc: object) -> None: ...

@overload
def binarize(image: _Image, algo: str, *, map: Optional[str] = ..., out: Optional[npt.NDArray[np.uint8]] = ...,
             dtype: Any = ..., times: Literal[False] = ..., **params: _Value) -> np.ndarray: ...
@overload
def binarize(image: _Image, algo: str, *, map: Optional[str] = ..., out: Optional[npt.NDArray[np.uint8]] = ...,
             dtype: Any = ..., times: Literal[True], **params: _Value) -> Tuple[np.ndarray, _Times]: ...
def devices() -> list[_Device]: ...
def algorithms() -> dict[str, _Algorithm]: ...
def evaluate(gt: _Image, result: _Image, *, pseudo: bool = ...) -> _Metrics: ...
