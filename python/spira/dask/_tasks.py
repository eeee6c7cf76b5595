"""The tasks of spira.dask's graphs: what the workers run.

Every task is a pure function of its inputs: a worker that dies costs only the tasks it held,
which the scheduler runs again with the same inputs and results. A partial result travels as a
tuple of NumPy arrays ``(distances, indices)`` (n_q x k_p, float32 / int64, global indices, -1
for padding), extended by ``(self_distances, self_present)`` on the path of the diagonal block
of a query block without ``exclude_self`` (see :func:`partial_knn`).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import scipy.sparse as sp

from .._merge import merge_own_parts
from .._neighbors import kneighbors

__all__ = ["KnnTask", "partial_knn", "merge_parts", "finalize", "graph_block", "empty_block"]

# How the query block and the index block of a partial k-NN relate.
CROSS = "cross"  # separate queries, or blocks of X that differ: no point is its own neighbour
EXCLUDE = "exclude"  # the diagonal block of X with exclude_self: the point's own index left out
SELF_FIRST = "self_first"  # the diagonal block of X without exclude_self (see partial_knn)


@dataclasses.dataclass(frozen=True)
class KnnTask:
    """The parameters every task of one k-NN graph shares (checked on the client)."""

    n_neighbors: int
    metric: str
    p: float
    device: str
    memory_budget: int | None
    dtype: np.dtype  # the value type spira computes in: that of X and Y together
    largest: bool  # a similarity: the largest values first
    exclude_self: bool

    def knn(self, index, queries, k, exclude_self=False):
        return kneighbors(index, queries, n_neighbors=k, metric=self.metric, p=self.p,
                          exclude_self=exclude_self, device=self.device,
                          memory_budget=self.memory_budget)


def _block(chunk, dtype):
    """A chunk of rows in the graph's value type (SciPy sparse stays sparse)."""
    if sp.issparse(chunk):
        return chunk if chunk.dtype == dtype else chunk.astype(dtype)
    return np.asarray(chunk, dtype=dtype)


def _shift(indices, start):
    """Block-local indices made global; padding (-1) stays."""
    if start:
        indices = np.where(indices >= 0, indices + start, indices)
    return indices


def _without_self(distances, indices, rows):
    """Row r of ``indices`` with the entry ``rows[r]`` removed (when present) and the row padded
    with -1; returns ``(distances, indices, self_distances, self_present)``."""
    is_self = indices == rows[:, None]
    present = is_self.any(axis=1)
    at = np.argmax(is_self, axis=1)
    self_distances = np.where(present, distances[np.arange(len(rows)), at], np.float32(0))
    # A stable sort on is_self moves the point itself to the end of its row, the others keep
    # their order; the end then becomes padding.
    order = np.argsort(is_self, axis=1, kind="stable")
    distances = np.take_along_axis(distances, order, axis=1)
    indices = np.take_along_axis(indices, order, axis=1)
    if indices.shape[1]:
        indices[present, -1] = -1
    return distances, indices, self_distances.astype(np.float32), present


def partial_knn(index_chunk, query_chunk, task, index_rows, query_rows, kind):
    """The k-NN of one query block among one index block, with global indices.

    Parameters
    ----------
    index_chunk, query_chunk : SciPy sparse matrix or ndarray
        A block of rows of X, and one of Y (or of X); the same chunk for a diagonal block.
    task : KnnTask
    index_rows, query_rows : (int, int)
        The global rows ``[start, stop)`` of each block (for indices and for error messages).
    kind : {"cross", "exclude", "self_first"}
        ``"cross"``: ``k_p = min(k, rows of the index block)`` neighbours. ``"exclude"``: the
        diagonal block with ``exclude_self``, ``min(k, rows - 1)`` neighbours besides the point.
        ``"self_first"``: the diagonal block without ``exclude_self``, computed as
        :func:`spira.kneighbors` computes the whole graph (each point first among the indices at
        its distance, ``min(k, rows)`` entries), then split into the other points' list and the
        point's own distance, which :func:`finalize` merges back in after the other blocks.

    Returns
    -------
    tuple
        ``(distances, indices)``, and for ``"self_first"`` also ``(self_distances,
        self_present)``: the point's distance to itself and whether it was among the block's
        ``min(k, rows)`` best (when it is not, ``k`` other points are strictly nearer, and it is
        not among the final ``k`` either).
    """
    i0, i1 = index_rows
    q0, q1 = query_rows
    index = _block(index_chunk, task.dtype)
    k = task.n_neighbors
    try:
        if kind == CROSS:
            d, i = task.knn(index, _block(query_chunk, task.dtype), min(k, i1 - i0))
            return d, _shift(i, i0)
        if kind == EXCLUDE:
            width = min(k, i1 - i0 - 1)
            if width == 0:  # a block of one row: nothing besides the point itself
                return np.empty((1, 0), np.float32), np.empty((1, 0), np.int64)
            d, i = task.knn(index, None, width, exclude_self=True)
            return d, _shift(i, i0)
        d, i = task.knn(index, None, min(k, i1 - i0))
        d, i, self_d, present = _without_self(d, i, np.arange(i1 - i0))
        return d, _shift(i, i0), self_d, present
    except (ValueError, TypeError, MemoryError, RuntimeError) as e:
        raise type(e)(
            f"spira.dask: queries {q0}:{q1} against index rows {i0}:{i1} (X and Y below are these "
            f"blocks, their rows counted from 0): {e}"
        ) from e


def merge_parts(parts, task):
    """merge_knn of the partial results of disjoint index blocks for one query block; the
    diagonal block's ``(self_distances, self_present)`` travel along."""
    merged = merge_own_parts([part[:2] for part in parts], task.n_neighbors, task.largest)
    for part in parts:
        if len(part) == 4:
            return merged + part[2:]
    return merged


def _insert_self(distances, indices, self_distances, present, rows, largest):
    """Each point merged back into its row before every other index at its distance (the rule of
    :func:`spira.kneighbors` without Y), the last entry dropping out."""
    d_self = self_distances[:, None]
    if largest:
        better = distances > d_self
    else:
        better = distances < d_self
    # NaN is worse than any number in both directions; padding (-1) is worse than anything.
    better |= np.isnan(d_self) & ~np.isnan(distances)
    better &= indices >= 0
    at = better.sum(axis=1)[:, None]  # the better entries are a prefix of the sorted row
    cols = np.arange(indices.shape[1])[None, :]
    present = present[:, None]
    src = np.where(present & (cols > at), cols - 1, cols)
    distances = np.take_along_axis(distances, src, axis=1)
    indices = np.take_along_axis(indices, src, axis=1)
    here = present & (cols == at)
    distances = np.where(here, d_self, distances)
    indices = np.where(here, rows[:, None], indices)
    return distances, indices


def finalize(parts, task, query_rows):
    """The last merge of a query block's tree, and the point itself put back in its row (the
    ``"self_first"`` case); returns ``(distances, indices)``, n_q x k without padding."""
    distances, indices, *self_part = merge_parts(parts, task)
    if self_part:
        rows = np.arange(*query_rows, dtype=np.int64)
        distances, indices = _insert_self(distances, indices, *self_part, rows, task.largest)
    if indices.size and indices.min() < 0:  # n_neighbors was checked against the index size
        raise RuntimeError(f"spira.dask: queries {query_rows[0]}:{query_rows[1]} have fewer "
                           f"than {task.n_neighbors} neighbours after the merge")
    return np.ascontiguousarray(distances), np.ascontiguousarray(indices)


def empty_block(k):
    """``(distances, indices)`` of a query block without rows."""
    return np.empty((0, k), np.float32), np.empty((0, k), np.int64)


def graph_block(result, n_index, connectivity):
    """One block of rows of the k-NN graph as a CSR matrix in the layout of
    :func:`spira.kneighbors_graph`: ``n_neighbors`` entries per row, nearest first, float64
    values (1, or the distance), int64 indices."""
    distances, indices = result
    n, k = indices.shape
    if connectivity:
        data = np.ones(n * k, dtype=np.float64)
    else:
        data = distances.astype(np.float64).ravel()
    indptr = np.arange(0, n * k + 1, k, dtype=np.int64)
    return sp.csr_matrix(sp.csr_array((data, indices.ravel(), indptr), shape=(n, n_index)))
