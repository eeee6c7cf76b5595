"""The tasks of spira.dask.select_k: what the workers run.

Every task is a pure function of its inputs (a worker that dies costs only the tasks it held).
A chunk is a block of rows and columns of the input (a 1-D vector is one row). A partial result
travels as ``(values, indices)``: n_rows x w arrays, the input's float type and int64, global
column indices, each row by increasing index, padded after its entries with index -1. The order
is that of :func:`spira.select_k`: by value in the direction asked for, -0 equal to +0, NaN last,
then the smaller index. Every selection below is the library's own (dense rows for a chunk, CSR
rows whose column indices are global indices for a merge), so the order is applied by the code
that defines it, on the worker's GPU where it has one.

Chunks may be NumPy arrays or CuPy arrays (on the worker's GPU). A CuPy chunk is read where it is
(delegates, pruning and selection on its GPU); only its candidates come back to host memory.
"""

from __future__ import annotations

import dataclasses
import warnings

import numpy as np

from .. import _core
from .._device import resolve_device
from .._select import select_k

__all__ = ["SelectTask", "delegates", "threshold", "candidates", "merge", "whole_rows", "empty"]


@dataclasses.dataclass(frozen=True)
class SelectTask:
    """The parameters every task of one selection shares (checked on the client)."""

    k: int
    largest: bool
    sorted: bool
    device: str
    dtype: np.dtype  # the value type spira selects in (that of spira.select_k for the input)
    n_cols: int  # the length of a row of the whole input
    one_row: bool  # the input is a 1-D vector
    gpu_chunks: bool = False  # the chunks are CuPy arrays


def _is_cupy(a):
    return type(a).__module__.split(".")[0] == "cupy"


def _xp(a):
    """The array module of ``a``: NumPy, or CuPy for a chunk in GPU memory."""
    if _is_cupy(a):
        import cupy

        return cupy
    return np


def _host(a):
    """``a`` in host memory (a NumPy array)."""
    return a.get() if _is_cupy(a) else a


def _rows(chunk, task):
    """A chunk as a C-contiguous 2-D array of the selection's value type, where it is."""
    xp = _xp(chunk)
    a = chunk if xp is not np else np.asarray(chunk)
    if a.dtype.kind not in "biuf":
        raise TypeError(f"spira.dask.select_k: a chunk holds dtype {a.dtype}, not real numbers")
    a = xp.ascontiguousarray(a, dtype=task.dtype)
    return a.reshape(1, -1) if task.one_row else a


def _keys(values, largest):
    """Keys whose ascending order (NumPy's: NaN last) is the selection's order of values."""
    return -values if largest else values


def delegates(chunk, task, group):
    """The best ``min(k, groups)`` delegates of each row of one chunk (Dr. Top-k's maximum
    delegates, Rule 1): the row is cut into groups of about ``group`` elements, each group's best
    number is its delegate (NaN when the group holds no number). The groups are strided (group j
    holds the elements j, j + m, j + 2m, ... of the chunk, m = len // group) and the remainder
    forms one more group: any partition into disjoint groups gives distinct delegates, and the
    strided one is a SIMD maximum of ``group`` slices, also on sorted input.

    Returns an n_rows x w array of delegate values in no particular order (NaN last per row).
    """
    a = _rows(chunk, task)
    xp = _xp(a)
    n_rows, n = a.shape
    m = n // group
    # NaN only where the whole group is NaN (the warning says so; it is expected here).
    reduce = xp.nanmax if task.largest else xp.nanmin
    parts = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        if m:
            parts.append(reduce(a[:, : group * m].reshape(n_rows, group, m), axis=1))
        if n - group * m:
            parts.append(reduce(a[:, group * m :], axis=1, keepdims=True))
    d = _host(xp.concatenate(parts, axis=1)) if parts else np.empty((n_rows, 0), a.dtype)
    return best_keys(d, task)


def best_keys(d, task):
    """The ``min(k, width)`` best values of each row of ``d`` (values only, NaN last)."""
    if d.shape[1] <= task.k:
        return d
    keys = np.partition(_keys(d, task.largest), task.k - 1, axis=1)[:, : task.k]
    return _keys(keys, task.largest)


def merge_delegates(parts, task):
    """The best ``k`` delegates of each row among those of several chunks."""
    return best_keys(np.concatenate(parts, axis=1), task)


def threshold(parts, task):
    """Each row's k-th best delegate (Rule 2), NaN for rows with fewer than ``k`` numeric
    delegates. The delegates are ``k`` distinct elements of the row, so the row's k-th best
    element is not worse than this value: an element worse than it (or NaN) is not selected;
    elements equal to it may be (ties go by index)."""
    d = merge_delegates(parts, task)
    if d.shape[1] < task.k:
        return np.full(d.shape[0], np.nan, dtype=d.dtype)
    kth = np.partition(_keys(d, task.largest), task.k - 1, axis=1)[:, task.k - 1]
    return _keys(kth, task.largest)


def _select_csr(n_rows, indptr, indices, data, width, task, sorted):
    """spira's CSR-row selection of ``width`` entries per row (the library's order; ties go to
    the earlier stored entry, and the entries of each row are stored by increasing index), padded
    with index -1."""
    values = np.empty((n_rows, width), dtype=task.dtype)
    out = np.empty((n_rows, width), dtype=np.int64)
    if n_rows and width:
        m = (n_rows, task.n_cols, indptr, indices, data)
        _core.select_k_rows(m, width, task.largest, sorted, values, out,
                            resolve_device(task.device))
    return values, out


def _csr_of(keep, values, columns):
    """The entries where ``keep`` holds, as CSR arrays in row-major (row, then index) order."""
    counts = keep.sum(axis=1)
    indptr = np.zeros(keep.shape[0] + 1, dtype=np.int64)
    np.cumsum(counts, out=indptr[1:])
    return indptr, np.ascontiguousarray(columns[keep], dtype=np.int64), values[keep]


def candidates(chunk, task, col_start, bound=None):
    """The best ``min(k, columns of the chunk)`` elements of each row of one chunk, with global
    column indices, by increasing index (padded with -1 where pruning left fewer).

    ``bound`` (from :func:`threshold`, NaN for rows without one) prunes before selecting: only
    elements not worse than the row's bound are kept (equal ones included: ties). When pruning
    keeps at most half of the chunk, the kept elements are selected as CSR rows; otherwise the
    whole chunk is selected as dense rows. Both give the same bytes. Returns ``(values, indices,
    kept)``, ``kept`` being the number of elements that reached the selection.
    """
    a = _rows(chunk, task)
    xp = _xp(a)
    n_rows, n = a.shape
    width = min(task.k, n)
    if bound is not None and not np.isnan(bound).all():
        if n_rows == 1:  # a vector: one comparison and one compaction
            keep = (a[0] >= bound[0]) if task.largest else (a[0] <= bound[0])
            cols = xp.flatnonzero(keep)
            if xp is not np and 2 * cols.size <= n:
                return _select_kept_gpu(a[0], cols, width, task, col_start)
            if 2 * cols.size <= n:
                indptr = np.array([0, cols.size], dtype=np.int64)
                values, out = _select_csr(1, indptr, cols + col_start, a[0, cols], width,
                                          task, False)
                return values, out, cols.size
        elif xp is np:  # CuPy blocks of rows are selected whole (the graph skips their bound)
            b = bound[:, None]
            keep = (a >= b) if task.largest else (a <= b)
            keep |= np.isnan(b)
            kept = int(np.count_nonzero(keep))
            if 2 * kept <= a.size:
                cols = np.broadcast_to(np.arange(n, dtype=np.int64) + col_start, a.shape)
                indptr, indices, data = _csr_of(keep, a, cols)
                values, out = _select_csr(n_rows, indptr, indices, data, width, task, False)
                return values, out, kept
    values, out = select_k(a, width, largest=task.largest, sorted=False, device=task.device)
    values, out = _host(values), _host(out)
    if col_start:
        out += col_start
    return values, out, a.size


def _select_kept_gpu(row, cols, width, task, col_start):
    """The best ``min(width, kept)`` of the kept elements ``row[cols]`` of a vector chunk on the
    GPU, selected as a dense vector (positions in the compacted vector increase with the index,
    so ties still go to the smaller index), in host memory, padded to ``width`` with index -1."""
    kept = int(cols.size)
    values = np.zeros((1, width), dtype=task.dtype)
    out = np.full((1, width), -1, dtype=np.int64)
    if kept:
        v, i = select_k(row[cols], min(width, kept), largest=task.largest, sorted=False)
        values[0, : v.size] = _host(v)
        out[0, : i.size] = _host(cols[i] + col_start)
    return values, out, kept


def merge(parts, task, final):
    """The best ``k`` of each row among the candidates of chunks of disjoint columns, given in
    increasing column order (so a row's entries are stored by increasing index). Intermediate
    merges keep ``min(k, candidates)`` entries by increasing index; the final one ``k`` entries,
    in the order asked for."""
    values = np.concatenate([p[0] for p in parts], axis=1)
    indices = np.concatenate([p[1] for p in parts], axis=1)
    width = task.k if final else min(task.k, values.shape[1])
    indptr, cols, data = _csr_of(indices >= 0, values, indices)
    v, i = _select_csr(values.shape[0], indptr, cols, data, width, task,
                       task.sorted if final else False)
    if final and i.size and i.min() < 0:  # k <= n_cols was checked; pruning is safe
        raise RuntimeError(f"spira.dask.select_k: fewer than k = {task.k} elements in a row "
                           "after the merge")
    return v, i


def whole_rows(chunk, task):
    """A block of whole rows: spira.select_k of the block, nothing to merge."""
    a = _rows(chunk, task)
    values, indices = select_k(a, task.k, largest=task.largest, sorted=task.sorted,
                               device=task.device)
    return _host(values), _host(indices)


def empty(task):
    """The result of a block without rows."""
    return np.empty((0, task.k), task.dtype), np.empty((0, task.k), np.int64)


def pick(result, which, one_row):
    """Values (0) or indices (1) of a block's result; the single row of a vector."""
    out = result[which]
    return out[0] if one_row else out
