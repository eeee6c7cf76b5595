"""spira.merge_knn: the k-NN lists of disjoint index blocks merged into those of their union."""

from __future__ import annotations

import numbers

import numpy as np

from . import _core
from ._input import check_metric

__all__ = ["merge_knn"]


def _part_arrays(part, p):
    """``(distances, indices)`` of part ``p`` as the C-contiguous float32 / int64 arrays the core
    reads."""
    if isinstance(part, (str, bytes)) or not hasattr(part, "__len__") or len(part) != 2:
        raise TypeError(
            f"parts[{p}] must be a (distances, indices) pair, got {type(part).__name__}"
        )
    distances, indices = (np.asarray(a) for a in part)
    if distances.dtype.kind != "f":
        raise TypeError(f"parts[{p}]: distances must be floating point, got dtype {distances.dtype}")
    if indices.dtype.kind not in "iu":
        raise TypeError(f"parts[{p}]: indices must be integers, got dtype {indices.dtype}")
    if distances.ndim != 2 or indices.ndim != 2:
        raise ValueError(
            f"parts[{p}]: distances and indices must be 2-D (n_queries, k), got shapes "
            f"{distances.shape} and {indices.shape}"
        )
    if indices.dtype.kind == "u" and indices.size and indices.max() > np.iinfo(np.int64).max:
        raise ValueError(f"parts[{p}]: an index does not fit int64")
    return (
        np.ascontiguousarray(distances, dtype=np.float32),
        np.ascontiguousarray(indices, dtype=np.int64),
    )


def merge_knn(parts, n_neighbors, *, metric="euclidean"):
    """Merges the k-NN lists of the same queries against disjoint blocks of an index.

    Each part is what :func:`spira.kneighbors` returns for one block of the index rows, with its
    indices made global (the block's local index plus the block's first row). The result is the
    k-NN lists of the queries against the union of the blocks: the building block of distributed
    runs (:mod:`spira.dask`), where partial results merge in a tree.

    Parameters
    ----------
    parts : sequence of (distances, indices) pairs
        ``distances`` of shape (n_queries, k_p), floating point (rounded to float32, the type
        :func:`spira.kneighbors` returns), and ``indices`` of the same shape, integers. Every
        part lists the same ``n_queries`` rows; ``k_p`` may differ between parts (and be 0).
        Each row is sorted best first in the order below, as :func:`spira.kneighbors` returns it.
        An index is global, ``>= 0``, or ``-1`` for padding, which may only follow a row's real
        entries (its distance is not read). The blocks are disjoint: no index appears twice in
        a row.
    n_neighbors : int
        Neighbours per query in the result, ``>= 1``. Rows with fewer candidates in all the parts
        together are padded (see Returns).
    metric : str, default="euclidean"
        The metric the parts were computed with (one of ``spira.valid_metrics()``); it sets the
        direction: the smallest distances first, the largest values first for the similarity
        ``"inner_product"``.

    Returns
    -------
    distances : ndarray of shape (n_queries, n_neighbors), dtype float32
    indices : ndarray of shape (n_queries, n_neighbors), dtype int64
        Each row best first. A row with fewer than ``n_neighbors`` real candidates is padded
        after them with index -1 and distance ``+inf`` (``-inf`` for a similarity).

    Raises
    ------
    ValueError
        A part that breaks the contract (rows that differ between parts, an index below -1,
        padding before a real entry, a row not sorted best first, an index listed twice in a
        row), with the library's message naming the part, the row and the value; no parts;
        ``n_neighbors < 1``; an unknown metric.
    TypeError
        A part that is not a pair of numeric arrays, or a non-integer ``n_neighbors``.

    Notes
    -----
    The order is :func:`spira.kneighbors`'s: by the float32 distance in the metric's direction,
    ``-0.0`` equal to ``+0.0``, NaN after every number, then the smaller index. Merging the
    results of disjoint blocks, each with ``k_p = min(n_neighbors, rows of the block)``, therefore
    gives bit for bit the result of :func:`spira.kneighbors` on the whole index for the same
    separate queries ``Y``. (Without ``Y``, :func:`spira.kneighbors` ranks each point first among
    the indices at its distance, which the blocks do not know; :mod:`spira.dask` handles it.)

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp, spira
    >>> X = sp.random(100, 20, density=0.2, format="csr", random_state=0)
    >>> Q = sp.random(5, 20, density=0.2, format="csr", random_state=1)
    >>> d0, i0 = spira.kneighbors(X[:60], Q, n_neighbors=4)
    >>> d1, i1 = spira.kneighbors(X[60:], Q, n_neighbors=4)
    >>> d, i = spira.merge_knn([(d0, i0), (d1, i1 + 60)], 4)
    >>> d_all, i_all = spira.kneighbors(X, Q, n_neighbors=4)
    >>> bool((i == i_all).all() and (d == d_all).all())
    True
    """
    metric, _ = check_metric(metric, 2)
    largest = bool(_core.is_similarity(metric))
    if isinstance(n_neighbors, (bool, np.bool_)) or not isinstance(n_neighbors, numbers.Integral):
        raise TypeError(f"n_neighbors must be an integer, got {type(n_neighbors).__name__}")
    if isinstance(parts, (str, bytes)) or not hasattr(parts, "__iter__"):
        raise TypeError(f"parts must be a sequence of (distances, indices) pairs, got "
                        f"{type(parts).__name__}")
    arrays = [_part_arrays(part, p) for p, part in enumerate(parts)]
    return _core.merge_knn(arrays, int(n_neighbors), largest)


def merge_own_parts(parts, n_neighbors, largest):
    """merge_knn of partial results that spira itself made (spira.dask's block pairs and merges):
    float32 / int64 arrays of a well-formed contract, whose rows are therefore not checked again
    (``spira::merge_check::shapes``; the row checks cost about half of the merge)."""
    arrays = [(np.ascontiguousarray(d, dtype=np.float32), np.ascontiguousarray(i, dtype=np.int64))
              for d, i in parts]
    return _core.merge_knn(arrays, int(n_neighbors), bool(largest), False)
