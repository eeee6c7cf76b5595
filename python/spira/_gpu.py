"""Input in CUDA device memory: CuPy arrays, ``cupyx.scipy.sparse`` matrices and torch tensors
(any other CUDA array that speaks DLPack goes through CuPy).

Such input is computed on its own device, without a trip through host memory, and the results come
back on that device in the input's framework: CuPy arrays (and ``cupyx.scipy.sparse`` matrices)
for CuPy input, torch tensors for torch input. CSR input with int64 row pointers, sorted column
indices and float32/float64 values is read where it is (zero-copy); everything else (dense arrays,
CSC/COO, int32 row pointers, other dtypes) is converted on the device first, never in place.

Neither CuPy nor torch is imported unless the input comes from it.
"""

from __future__ import annotations

__all__ = ["framework_of", "device_csr", "device_dense", "empty", "from_core", "synchronize"]

from ._input import canonical_sparse, value_dtype_name

_KDLCUDA = 2  # DLPack's device type of CUDA memory


def _module(x):
    return type(x).__module__ or ""


def framework_of(x):
    """``"cupy"`` or ``"torch"`` for input in CUDA memory, None for anything else."""
    mod = _module(x)
    if mod.startswith("cupyx.scipy.sparse") or mod.startswith("cupy"):
        return "cupy" if hasattr(x, "shape") else None
    if mod.startswith("torch"):
        return "torch" if getattr(x, "is_cuda", False) else None
    dev = getattr(x, "__dlpack_device__", None)
    if dev is not None:
        try:
            kind, _ = dev()
        except Exception:  # noqa: BLE001 - not a usable DLPack producer: host handling decides
            return None
        if int(kind) == _KDLCUDA:
            return "dlpack"
    return None


def _cupy():
    try:
        import cupy
        import cupyx.scipy.sparse
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise TypeError(
            "the input is a CUDA array that is neither a CuPy array nor a torch tensor; spira "
            "reads such arrays through CuPy, which is not installed"
        ) from e
    return cupy, cupyx.scipy.sparse


def _check_finite(all_finite, any_nan, name):
    if not all_finite:
        what = "NaN" if any_nan else "infinity"
        raise ValueError(f"Input {name} contains {what}; spira needs finite values")


def _device_id(x, framework):
    if framework == "torch":
        return x.device.index if x.device.index is not None else 0
    return x.device.id


def _cupy_csr(X, name, finite):
    cupy, cusp = _cupy()
    if cusp.issparse(X):
        m = canonical_sparse(X, value_dtype_name(X.dtype.kind, X.dtype.itemsize, name))
    else:
        a = X if isinstance(X, cupy.ndarray) else cupy.from_dlpack(X)
        if a.ndim != 2:
            raise ValueError(f"Expected a 2-D array for {name}, got shape {a.shape}")
        dtype = value_dtype_name(a.dtype.kind, a.dtype.itemsize, name)
        m = cusp.csr_matrix(a.astype(dtype, copy=False))
        if not m.has_canonical_format:
            m.sum_duplicates()
    indptr = cupy.ascontiguousarray(m.indptr, dtype=cupy.int64)
    indices = cupy.ascontiguousarray(m.indices)
    if indices.dtype not in (cupy.int32, cupy.int64):
        indices = indices.astype(cupy.int64)
    data = cupy.ascontiguousarray(m.data)
    nnz = int(indices.size)
    if finite and nnz:
        ok = cupy.isfinite(data).all()
        if not bool(ok):
            _check_finite(False, bool(cupy.isnan(data).any()), name)
    return (int(m.shape[0]), int(m.shape[1]), indptr, indices, data), data.device.id


def _torch_csr(X, name, finite):
    import torch

    dtype = value_dtype_name(
        "f" if X.dtype.is_floating_point else ("b" if X.dtype == torch.bool else "i"),
        X.element_size(),
        name,
    )
    dtype = getattr(torch, dtype)
    if X.layout == torch.sparse_csr:
        m = X
    elif X.layout == torch.sparse_coo:
        m = X.coalesce().to_sparse_csr()
    elif X.layout == torch.strided:
        if X.dim() != 2:
            raise ValueError(f"Expected a 2-D tensor for {name}, got shape {tuple(X.shape)}")
        m = X.to_sparse_csr()
    else:
        raise TypeError(f"{name}: torch layout {X.layout} is not supported (use CSR or dense)")
    indptr = m.crow_indices().to(torch.int64).contiguous()
    indices = m.col_indices().contiguous()
    data = m.values().to(dtype).contiguous()
    if finite and data.numel():
        if not bool(torch.isfinite(data).all()):
            _check_finite(False, bool(torch.isnan(data).any()), name)
    return (int(m.shape[0]), int(m.shape[1]), indptr, indices, data), _device_id(X, "torch")


def device_csr(X, name, framework, finite=True):
    """``((rows, cols, indptr, indices, data), device)``: canonical CSR arrays of ``X`` on its
    CUDA device, in its framework (CuPy for ``"dlpack"`` input)."""
    if framework == "torch":
        return _torch_csr(X, name, finite)
    return _cupy_csr(X, name, finite)


def device_dense(A, name, framework):
    """``(array, device)``: a C-contiguous float32/float64 2-D copy or view of a dense device
    array (1-D input is one row; the caller reshapes back)."""
    if framework == "torch":
        import torch

        if A.layout != torch.strided:
            raise TypeError(f"{name}: expected a dense tensor, got layout {A.layout}")
        kind = "f" if A.dtype.is_floating_point else ("b" if A.dtype == torch.bool else "i")
        dtype = getattr(torch, value_dtype_name(kind, A.element_size(), name))
        return A.to(dtype).contiguous(), _device_id(A, "torch")
    cupy, _ = _cupy()
    a = A if isinstance(A, cupy.ndarray) else cupy.from_dlpack(A)
    dtype = value_dtype_name(a.dtype.kind, a.dtype.itemsize, name)
    return cupy.ascontiguousarray(a, dtype=dtype), a.device.id


def empty(shape, dtype, framework, device):
    """An uninitialised C-contiguous device array (dtype given by name, e.g. "float32")."""
    if framework == "torch":
        import torch

        return torch.empty(shape, dtype=getattr(torch, dtype), device=f"cuda:{device}")
    cupy, _ = _cupy()
    with cupy.cuda.Device(device):
        return cupy.empty(shape, dtype=dtype)


def from_core(array, framework):
    """A device array the compiled core returned (DLPack), as the framework's array (no copy)."""
    if framework == "torch":
        import torch

        return torch.from_dlpack(array)
    cupy, _ = _cupy()
    return cupy.from_dlpack(array)


def synchronize(framework, device):
    """Waits for the framework's current stream on ``device``: the input is complete before
    spira, which works on the device's legacy default stream, reads it."""
    if framework == "torch":
        import torch

        torch.cuda.current_stream(device).synchronize()
    else:
        cupy, _ = _cupy()
        with cupy.cuda.Device(device):
            cupy.cuda.get_current_stream().synchronize()
