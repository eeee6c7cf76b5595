"""spira.select_k: the k largest (or smallest) values of each row, dense or sparse."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from . import _core
from ._device import placement
from ._gpu import device_csr, device_dense, empty, synchronize
from ._input import _value_dtype, as_csr

__all__ = ["select_k"]


def select_k(A, k, *, largest=True, sorted=True, device="auto"):
    """The ``k`` best values of each row of ``A`` and their column positions.

    Parameters
    ----------
    A : {array-like, sparse matrix, sparse array} of shape (n_rows, n_cols) or (n_cols,)
        Dense input: every element of a row counts. Sparse input (any SciPy format): only the
        stored values of a row count, and their column indices are returned. Integer and boolean
        values become float64; float32 and float64 are kept.
    k : int
        Values per row: ``1 <= k <= n_cols`` for dense input; ``k >= 1`` for sparse input, whose
        rows with fewer stored values are padded with index -1 and ``-inf`` (``+inf`` with
        ``largest=False``).
    largest : bool, default=True
        Keep the largest values (else the smallest).
    sorted : bool, default=True
        Each row best first (by value, then the smaller index); else by increasing index.
    device : {"auto", "cpu", "cuda"}, default="auto"
        Where to compute. Input in GPU memory (a CuPy array, a ``cupyx.scipy.sparse`` matrix, a
        torch tensor) is selected on its GPU and the results stay there, in its framework.

    Returns
    -------
    values : ndarray of shape (n_rows, k) (or (k,) for 1-D input), the input's float type
    indices : ndarray of the same shape, int64
        Column positions (dense) or stored column indices (sparse).

    Notes
    -----
    The order is total and the same on both backends: -0.0 equals +0.0, NaN is the worst value
    in both directions (kept only when fewer than ``k`` numbers remain), ties go to the smaller
    index. The result is exact and deterministic (``torch.topk`` may pick any of tied values).

    Examples
    --------
    >>> import numpy as np, spira
    >>> values, indices = spira.select_k(np.array([[3.0, 1.0, 4.0, 1.0, 5.0]]), 2)
    >>> values.tolist(), indices.tolist()
    ([[5.0, 4.0]], [[4, 2]])
    """
    cuda, framework = placement(device, A=A)
    if isinstance(k, (bool, np.bool_)) or not isinstance(k, (int, np.integer)):
        raise TypeError(f"k must be an integer, got {type(k).__name__}")
    k = int(k)
    largest, sorted = bool(largest), bool(sorted)
    if framework is not None:
        return _select_k_device(A, k, largest, sorted, framework)
    if sp.issparse(A):
        m = as_csr(A, "A", finite=False)
        if k < 1:
            raise ValueError(f"k = {k} must be at least 1")
        values = np.empty((m[0], k), dtype=m[4].dtype)
        indices = np.empty((m[0], k), dtype=np.int64)
        _core.select_k_rows(m, k, largest, sorted, values, indices, cuda)
        return values, indices
    if isinstance(A, (str, bytes)):
        raise TypeError("A must be an array or a sparse matrix, got a string")
    try:
        a = np.asarray(A)
    except (TypeError, ValueError) as e:
        raise TypeError(f"A cannot be read as a numeric array: {e}") from e
    if a.dtype.kind not in "biuf":
        raise TypeError(f"A must hold real numbers, got dtype {a.dtype}")
    one_row = a.ndim == 1
    if one_row:
        a = a.reshape(1, -1)
    if a.ndim != 2:
        raise ValueError(f"Expected a 1-D or 2-D array for A, got shape {a.shape}")
    a = np.ascontiguousarray(a, dtype=_value_dtype(a.dtype, "A"))
    if not 1 <= k <= a.shape[1]:
        raise ValueError(f"k = {k} must be in [1, {a.shape[1]}] (the columns of A)")
    values = np.empty((a.shape[0], k), dtype=a.dtype)
    indices = np.empty((a.shape[0], k), dtype=np.int64)
    if a.shape[0] > 0:
        _core.select_k_dense(a, k, largest, sorted, values, indices, cuda)
    if one_row:
        return values[0], indices[0]
    return values, indices


def _is_sparse_device(A, framework):
    if framework == "torch":
        import torch

        return A.layout != torch.strided
    if framework == "cupy":
        import cupyx.scipy.sparse as cusp

        return cusp.issparse(A)
    return False


def _select_k_device(A, k, largest, sorted, framework):
    """select_k of a CuPy / cupyx / torch input on its GPU; results there, in its framework."""
    if _is_sparse_device(A, framework):
        m, on = device_csr(A, "A", framework, finite=False)
        if k < 1:
            raise ValueError(f"k = {k} must be at least 1")
        dtype = "float64" if m[4].itemsize == 8 else "float32"
        values = empty((m[0], k), dtype, framework, on)
        # Indices come back in A's index type, then widen to int64.
        indices = empty((m[0], k), "int64" if m[3].itemsize == 8 else "int32", framework, on)
        synchronize(framework, on)
        _core.select_k_rows(m, k, largest, sorted, values, indices, True)
        if m[3].itemsize != 8:
            indices = indices.astype("int64") if framework != "torch" else indices.long()
        return values, indices
    a, on = device_dense(A, "A", framework)
    one_row = a.ndim == 1
    if one_row:
        a = a.reshape(1, -1)
    if a.ndim != 2:
        raise ValueError(f"Expected a 1-D or 2-D array for A, got shape {tuple(a.shape)}")
    if not 1 <= k <= a.shape[1]:
        raise ValueError(f"k = {k} must be in [1, {a.shape[1]}] (the columns of A)")
    dtype = "float64" if a.itemsize == 8 else "float32"
    values = empty((a.shape[0], k), dtype, framework, on)
    indices = empty((a.shape[0], k), "int64", framework, on)
    if a.shape[0] > 0:
        synchronize(framework, on)
        _core.select_k_dense(a, k, largest, sorted, values, indices, True)
    if one_row:
        return values[0], indices[0]
    return values, indices
