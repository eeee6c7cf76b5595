"""Conversion of user input into the canonical CSR arrays the compiled core reads.

Every input becomes a tuple ``(rows, cols, indptr, indices, data)`` of C-contiguous arrays: int64
row pointers (the library's offset type), int32 or int64 column indices (as given), float32 or
float64 values (as given; integer and boolean input becomes float64, float16 becomes float32).
The caller's arrays are never modified: whatever needs changing (sorting or summing duplicate
column indices, another dtype, another layout) is done on a copy.
"""

from __future__ import annotations

import contextlib
import numbers

import numpy as np
import scipy.sparse as sp

from . import _core


__all__ = [
    "as_csr",
    "canonical_sparse",
    "read_operands",
    "value_dtype_name",
    "common_types",
    "check_n_neighbors",
    "check_memory_budget",
    "check_metric",
    "python_names",
    "KNN_NAMES",
    "PAIRWISE_NAMES",
]

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def value_dtype_name(kind, itemsize, name):
    """The float type spira computes in ("float32" or "float64") for values of a dtype of the
    given kind ("f", "i", "u", "b") and size: floats of 4 bytes or fewer become float32, wider
    ones float64, integers and booleans float64. NumPy, CuPy and torch dtypes all reduce to this."""
    if kind == "f" and itemsize <= 8:
        return "float32" if itemsize <= 4 else "float64"
    if kind in "biu":
        return "float64"
    raise TypeError(
        f"{name} must hold real numbers (float32, float64, integers or booleans), got a "
        f"{kind!r}-kind dtype of {itemsize} bytes"
    )


def _value_dtype(dtype, name):
    """The float type spira computes in for input values of ``dtype`` (a NumPy dtype)."""
    dtype = np.dtype(dtype)
    try:
        return np.dtype(value_dtype_name(dtype.kind, dtype.itemsize, name))
    except TypeError:
        raise TypeError(
            f"{name} must hold real numbers (float32, float64, integers or booleans), "
            f"got dtype {dtype}"
        ) from None


def canonical_sparse(X, dtype):
    """A SciPy or ``cupyx.scipy.sparse`` matrix as a canonical CSR of ``dtype``: ``X`` itself when
    it already is one, else a new matrix (sorted, summed column indices); ``X`` is never changed."""
    m = X.tocsr()  # the same object when X already is a CSR
    if m.dtype != dtype:
        m = m.astype(dtype)
    if not m.has_canonical_format:
        # Unsorted or duplicate column indices: sorted and summed on a copy.
        m = m.copy() if m is X else m
        m.sum_duplicates()
    return m


def _check_finite(data, name):
    """Raises ValueError naming ``name`` when the host array ``data`` holds NaN or infinity."""
    if not data.size or data.dtype.kind != "f":
        return
    values = np.ascontiguousarray(data, dtype=data.dtype if data.dtype in _FLOATS else np.float64)
    # One pass on the library's threads; the exact test only for the message.
    if _core.all_finite(values):
        return
    what = "NaN" if np.isnan(values).any() else "infinity"
    raise ValueError(f"Input {name} contains {what}; spira needs finite values")


def as_csr(X, name="X", finite=True):
    """Returns ``(rows, cols, indptr, indices, data)``: a canonical CSR copy or view of ``X``.

    Parameters
    ----------
    X : scipy.sparse matrix or array (any format), or array-like of shape (n_samples, n_features)
        Sparse input stays sparse; dense input is converted to CSR (its zeros are not stored).
    name : str
        The argument's name in error messages.
    finite : bool
        Whether NaN and infinity are rejected (select_k ranks them instead).

    Raises
    ------
    TypeError
        For strings, object arrays and other non-numeric input.
    ValueError
        For input that is not 2-D, or holds NaN or infinity.
    """
    if sp.issparse(X):
        if X.ndim != 2:
            raise ValueError(f"Expected a 2-D sparse {name}, got {X.ndim}-D input instead")
        m = canonical_sparse(X, _value_dtype(X.dtype, name))
    else:
        if isinstance(X, (str, bytes)):
            raise TypeError(f"{name} must be an array or a sparse matrix, got a string")
        try:
            a = np.asarray(X)
        except (TypeError, ValueError) as e:
            raise TypeError(f"{name} cannot be read as a numeric array: {e}") from e
        if a.dtype.kind not in "biuf":
            raise TypeError(
                f"{name} must hold real numbers (float32, float64, integers or booleans), "
                f"got dtype {a.dtype}"
            )
        if a.ndim != 2:
            raise ValueError(
                f"Expected a 2-D array for {name}, got a {a.ndim}-D array of shape {a.shape} "
                "instead (reshape 1-D data with array.reshape(-1, 1) for one feature or "
                "array.reshape(1, -1) for one sample)"
            )
        dtype = _value_dtype(a.dtype, name)
        m = sp.csr_matrix(a, dtype=dtype)  # new arrays: a is only read
    rows, cols = m.shape
    indptr = np.ascontiguousarray(m.indptr, dtype=np.int64)
    indices = m.indices
    if indices.dtype not in (np.dtype(np.int32), np.dtype(np.int64)):
        indices = indices.astype(np.int64)
    indices = np.ascontiguousarray(indices)
    data = np.ascontiguousarray(m.data)
    nnz = int(indptr[-1]) if indptr.size else 0
    indices, data = indices[:nnz], data[:nnz]
    if finite:
        _check_finite(data, name)
    return (int(rows), int(cols), indptr, indices, data)


def _widened(m, index64, value64):
    """``m`` with 64-bit indices / values where asked (works on NumPy, CuPy and torch arrays)."""
    rows, cols, indptr, indices, data = m
    if index64 and indices.itemsize == 4:
        indices = indices.astype(np.int64) if hasattr(indices, "astype") else indices.long()
    if value64 and data.itemsize == 4:
        data = data.astype(np.float64) if hasattr(data, "astype") else data.double()
    return (rows, cols, indptr, indices, data)


def read_operands(X, Y, framework):
    """``(x, y, device)``: canonical CSR arrays of ``X`` and ``Y`` (None when absent) with common
    types, and the CUDA device holding them (-1: host memory; ``framework`` from
    ``_device.placement``)."""
    if framework is None:
        x = as_csr(X, "X")
        if Y is None:
            return x, None, -1
        x, y = common_types(x, as_csr(Y, "Y"))
        return x, y, -1
    from ._gpu import device_csr  # here, not at the top: _gpu imports this module

    x, device = device_csr(X, "X", framework)
    if Y is None:
        return x, None, device
    y, device_y = device_csr(Y, "Y", framework)
    if device_y != device:
        raise ValueError(f"X is on CUDA device {device} but Y on device {device_y}")
    x, y = common_types(x, y)
    return x, y, device


def common_types(x, y):
    """``x`` and ``y`` with one value type (float64 if either has it) and one index type (int64
    if either has it), after checking that their numbers of columns agree."""
    if x[1] != y[1]:
        raise ValueError(
            f"X has {x[1]} features (columns) but Y has {y[1]}; they must have the same number"
        )
    index64 = 8 in (x[3].itemsize, y[3].itemsize)
    value64 = 8 in (x[4].itemsize, y[4].itemsize)
    return _widened(x, index64, value64), _widened(y, index64, value64)


def check_n_neighbors(n_neighbors, available, exclude_self):
    """Checks that ``n_neighbors`` is an integer in [1, available]."""
    if isinstance(n_neighbors, (bool, np.bool_)) or not isinstance(n_neighbors, numbers.Integral):
        raise TypeError(f"n_neighbors must be an integer, got {type(n_neighbors).__name__}")
    n_neighbors = int(n_neighbors)
    if n_neighbors < 1:
        raise ValueError(f"Expected n_neighbors > 0, got {n_neighbors}")
    if n_neighbors > available:
        if available <= 0 and not exclude_self:
            raise ValueError(f"X has no samples (0 rows); n_neighbors={n_neighbors} needs at least "
                             f"{n_neighbors}")
        other = " other" if exclude_self else ""
        raise ValueError(
            f"Expected n_neighbors <= {available} (the number of{other} samples in X), "
            f"got {n_neighbors}"
        )
    return n_neighbors


# The core's C++ names of the arguments in its messages, and the Python names of the same
# arguments: spira.kneighbors (X the index, Y the queries) and spira.pairwise_distances (A = X,
# B = Y, its workspace = memory_budget).
KNN_NAMES = (
    ("knn_params::memory_budget", "memory_budget"),
    ("the query matrix", "Y"),
    ("the queries", "Y"),
    ("the index", "X"),
)
PAIRWISE_NAMES = (
    ("params.workspace_bytes", "memory_budget"),
    ("workspace_bytes", "memory_budget"),
    ("but A has", "but X has"),
    ("but B has", "but Y has"),
)


@contextlib.contextmanager
def python_names(names):
    """Runs a call of the core; its ValueError or MemoryError is raised again with the core's C++
    names of the arguments replaced by the Python ones (``names``: pairs of C++ and Python text),
    so that the message names what the caller passed."""
    try:
        yield
    except (ValueError, MemoryError) as error:
        message = str(error)
        for core, python in names:
            message = message.replace(core, python)
        if message == str(error):
            raise
        raise type(error)(message) from None


def check_memory_budget(memory_budget):
    """The budget in bytes for the core: 0 (the library's default) for None."""
    if memory_budget is None:
        return 0
    if isinstance(memory_budget, (bool, np.bool_)) or not isinstance(
        memory_budget, numbers.Integral
    ):
        raise TypeError(
            f"memory_budget must be None or an integer number of bytes, got "
            f"{type(memory_budget).__name__}"
        )
    if memory_budget < 1:
        raise ValueError(f"memory_budget must be a positive number of bytes, got {memory_budget}")
    return int(memory_budget)


def check_metric(metric, p):
    """``(metric, p)`` for the core: the metric's name checked to be a string (the core parses it,
    with its aliases) and p, which only minkowski reads."""
    if not isinstance(metric, str):
        raise TypeError(
            f"metric must be a string naming one of spira's metrics, got {type(metric).__name__}"
            " (callables are not supported)"
        )
    if isinstance(p, (bool, np.bool_)) or not isinstance(p, numbers.Real):
        raise TypeError(f"p must be a real number, got {type(p).__name__}")
    return metric, float(p)
