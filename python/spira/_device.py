"""Device selection and the build's configuration (spira.show_config)."""

from __future__ import annotations

import sys

from . import _core
from ._gpu import framework_of

__all__ = ["placement", "resolve_device", "show_config"]

_DEVICES = ("auto", "cpu", "cuda")


def resolve_device(device):
    """True when the call runs on the CUDA backend.

    ``"auto"`` picks CUDA when the backend is compiled in and a GPU is visible, else the host;
    ``"cpu"`` always the host; ``"cuda"`` raises RuntimeError when CUDA is not available.
    """
    if not isinstance(device, str) or device not in _DEVICES:
        raise ValueError(f"device must be one of 'auto', 'cpu', 'cuda', got {device!r}")
    if device == "cpu":
        return False
    compiled = _core.cuda_compiled()
    available = compiled and _core.cuda_device_count() > 0
    if device == "auto":
        return available
    if not compiled:
        raise RuntimeError(
            "device='cuda': this build of spira was compiled without the CUDA backend "
            "(reinstall with nvcc available and -Ccmake.define.SPIRA_ENABLE_CUDA=ON, "
            "or use device='cpu')"
        )
    if not available:
        raise RuntimeError("device='cuda': no CUDA device is available (use device='cpu')")
    return True


def placement(device, **inputs):
    """``(cuda, framework)`` for a call on ``inputs`` (name -> argument, None for absent ones).

    Host input: ``(resolve_device(device), None)``. Input in CUDA memory (CuPy, cupyx sparse,
    torch, DLPack): ``(True, framework)``; the call runs on the input's device, so
    ``device="cpu"``, a build without CUDA, and host and device arguments mixed are errors.
    """
    frameworks = {name: framework_of(x) for name, x in inputs.items() if x is not None}
    on_device = {name: fw for name, fw in frameworks.items() if fw is not None}
    if not on_device:
        return resolve_device(device), None
    if not isinstance(device, str) or device not in _DEVICES:
        raise ValueError(f"device must be one of 'auto', 'cpu', 'cuda', got {device!r}")
    names = " and ".join(on_device)
    if len(on_device) != len(frameworks) or len(set(on_device.values())) > 1:
        where = ", ".join(f"{n}: {fw or 'host memory'}" for n, fw in frameworks.items())
        raise ValueError(
            f"the inputs must all be in host memory or all be arrays of one framework in CUDA "
            f"memory, got {where}"
        )
    if device == "cpu":
        raise ValueError(
            f"device='cpu' but {names} is in CUDA memory; copy it to the host first "
            "(cupy: X.get(), torch: X.cpu()) or use device='auto'"
        )
    if not _core.cuda_compiled():
        raise RuntimeError(
            f"{names} is in CUDA memory but this build of spira was compiled without the CUDA "
            "backend (reinstall with nvcc available and -Ccmake.define.SPIRA_ENABLE_CUDA=ON)"
        )
    return True, next(iter(on_device.values()))


def show_config(file=None):
    """Prints spira's version, the backends compiled in and the GPUs seen.

    Parameters
    ----------
    file : file-like, optional
        Where to print (default: ``sys.stdout``).

    Examples
    --------
    >>> import spira
    >>> spira.show_config()  # doctest: +SKIP
    spira 0.1.0
    backends: host (OpenMP, 2 threads), cuda (not compiled)
    gpu: none
    """
    out = sys.stdout if file is None else file
    compiled = _core.cuda_compiled()
    gpus = _core.gpu_names() if compiled else []
    cuda = "cuda" if compiled else "cuda (not compiled)"
    print(f"spira {_core.version()}", file=out)
    print(f"backends: host (OpenMP, {_core.host_threads()} threads), {cuda}", file=out)
    if gpus:
        print("gpu: " + "; ".join(f"{i}: {name}" for i, name in enumerate(gpus)), file=out)
    else:
        print("gpu: none", file=out)
    print("device='auto' runs on: " + ("cuda" if resolve_device("auto") else "cpu"), file=out)
