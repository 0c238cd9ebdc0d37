"""docbin: binarize document images on OpenCL devices, numpy in, numpy out.

    import docbin, numpy as np
    ctx = docbin.Context()                  # binds the devices once; reuse it for many pages
    out = ctx.binarize(page, "sauvola", window=75, k=0.2)   # uint8 (H, W) or (H, W, 3) in
    m = docbin.evaluate(gt, out)            # F, pseudo-F, PSNR, DRD, ...
    docbin.binarize(page, "howe")           # the same through a default context

Results are uint8, ink 0 and background 255 (or bool with dtype=bool:
ink False, background True, as the uint8 image cast to bool). Every map of
stages to devices gives the same image; map=None is "auto", as in the C API
and the command line. Bad arguments raise ValueError or TypeError, a missing
device or an OpenCL failure docbin.DeviceError, each naming the fix.
"""
import numbers
import threading

import numpy as np

from . import _docbin
from ._docbin import DeviceError, Error

__version__ = _docbin.version()
__all__ = ["Context", "Error", "DeviceError", "binarize", "evaluate", "devices", "algorithms", "__version__"]


def _pixels(image, name):
    """`image` as a uint8 array of shape (H, W) or (H, W, 3), any strides."""
    a = np.asarray(image)
    if a.dtype != np.uint8:
        raise TypeError(f"{name} has dtype {a.dtype}; docbin takes uint8 pixels (0 to 255): convert it, e.g. "
                        f"np.clip(x * 255, 0, 255).astype(np.uint8) for floats in [0, 1]")
    if a.ndim == 3 and a.shape[2] == 1:
        a = a[:, :, 0]
    if a.ndim not in (2, 3) or (a.ndim == 3 and a.shape[2] != 3):
        fix = "; drop the alpha channel with image[..., :3]" if a.ndim == 3 and a.shape[2] == 4 else ""
        raise ValueError(f"{name} has shape {a.shape}; docbin takes gray (H, W) or RGB (H, W, 3) pixels{fix}")
    if a.shape[0] == 0 or a.shape[1] == 0:
        raise ValueError(f"{name} is empty (shape {a.shape}); give at least one pixel")
    return a


def _binary(image, name):
    """A binary image as uint8 0/255: bool arrays map False to 0 (ink) and True to 255."""
    a = np.asarray(image)
    if a.dtype == np.bool_:
        a = a.astype(np.uint8) * np.uint8(255)
    a = _pixels(a, name)
    if a.ndim != 2:
        raise ValueError(f"{name} has shape {a.shape}; a binary image is gray (H, W)")
    return a


def _settings(params):
    """Keyword parameters as the (name, value) text pairs the library parses."""
    pairs = []
    for name, value in params.items():
        if isinstance(value, (bool, np.bool_)):
            raise TypeError(f"parameter {name}={value!r}: give a number or a word, not a bool")
        if isinstance(value, numbers.Integral):
            text = str(int(value))
        elif isinstance(value, numbers.Real):
            text = repr(float(value))
        elif isinstance(value, str):
            text = value
        else:
            raise TypeError(f"parameter {name}={value!r}: give a number or a word")
        pairs.append((name, text))
    return pairs


class Context:
    """The bound OpenCL devices, their compiled kernels and buffer pools.

    Opening one takes most of a second with a GPU driver; a page then takes
    milliseconds, so open one and reuse it. cpu_device and gpu_device take the
    command line's device specs ("P:D", "platform:type:name" substrings, or a
    word such as "portable" or "nvidia"); None takes DOCBIN_CPU_DEVICE and
    DOCBIN_GPU_DEVICE, else the first CPU and the largest GPU. Threads may share
    a context: its runs take turns on the devices while the GIL is released.
    """

    def __init__(self, cpu_device=None, gpu_device=None):
        self._ctx = _docbin.Context(cpu_device, gpu_device)

    def binarize(self, image, algo, *, map=None, out=None, dtype=np.uint8, times=False, **params):
        """Binarizes (or halftones, with "dbs") one page.

        image: uint8 (H, W) gray or (H, W, 3) RGB, any strides. algo: "otsu",
        "niblack", "sauvola", "nick", "wolf", "hbk", "howe", "dbs". params: the
        algorithm's parameters (window=75, k=0.2; docbin.algorithms() lists
        them), variant="..." and gray="bt601" or "qt" (how colour becomes
        gray). map: None or "auto", "measure", or an explicit map such as
        "gpu,cpu,gpu" or "cpu". out: a writable uint8 (H, W) array to fill.
        dtype: np.uint8 (ink 0, background 255) or bool (ink False). With
        times=True, returns (image, times) where times gives the map, how it
        was chosen and each stage's device time in ms.
        """
        pixels = _pixels(image, "image")
        as_bool = np.dtype(dtype) == np.bool_
        if not as_bool and np.dtype(dtype) != np.uint8:
            raise TypeError(f"dtype {dtype!r}: give np.uint8 (ink 0, background 255) or bool (ink False)")
        shape = pixels.shape[:2]
        if out is None:
            result = np.empty(shape, np.uint8)
        else:
            result = out
            if not isinstance(out, np.ndarray) or out.dtype != np.uint8 or out.shape != shape:
                raise ValueError(f"out must be a uint8 array of shape {shape}")
            if as_bool:
                raise ValueError("out holds uint8 pixels; drop dtype=bool or out")
        t = self._ctx.run(pixels, result, algo, _settings(params), map, times)
        if as_bool:
            result = result != 0
        return (result, t) if times else result

    def binarize_files(self, inputs, out_dir, algo, *, map=None, format="png", **params):
        """Binarizes many files with decoding and encoding threads around the
        devices, as `docbin-run --out-dir` does: inputs are image paths,
        "@LIST" files or directories; each output is out_dir/<name>.<format>
        (png, pbm, pgm or pnm). A page that fails leaves no output and the
        others still run; then the call raises, naming the first failure."""
        if isinstance(inputs, str):
            inputs = [inputs]
        self._ctx.run_files([str(p) for p in inputs], str(out_dir), algo, _settings(params), map, format)

    def devices(self):
        """The machine's OpenCL devices: spec ("P:D"), platform, name, type,
        driver, compute units, memory in bytes and the roles bound to each."""
        return self._ctx.devices()

    def close(self):
        """Releases the devices now rather than when the context is collected."""
        self._ctx.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


_default = None
_default_lock = threading.Lock()


def _default_context():
    global _default
    with _default_lock:
        if _default is None:
            _default = Context()
        return _default


def binarize(image, algo, **kwargs):
    """Context.binarize on a context opened at the first call and kept."""
    return _default_context().binarize(image, algo, **kwargs)


def devices():
    """The devices of the default context and the roles bound to them."""
    return _default_context().devices()


def algorithms():
    """Every algorithm by name: its doc, stages (name, roles they can run on),
    parameters (doc, kind, default, min, max, choices) and variants."""
    return {a["name"]: a for a in _docbin.algorithms()}


def evaluate(gt, result, *, pseudo=True):
    """The DIBCO metrics of `result` against the ground truth `gt`, both binary
    (uint8 0/255, or bool with ink False): fmeasure, precision, recall, the
    pseudo ones (weights generated from gt as DIBCO's tool does; pseudo=False
    skips them), psnr, drd, nrm, mcc, accuracy (percentages x100, as DIBCO
    reports them), and the counts tp, tn, fp, fn, nubn and drd_sum."""
    g, r = _binary(gt, "gt"), _binary(result, "result")
    if g.shape != r.shape:
        raise ValueError(f"gt has shape {g.shape} but result {r.shape}; a result must have its ground truth's size")
    return _docbin.evaluate(g, r, pseudo)
