"""spira.dask.kneighbors and spira.dask.kneighbors_graph: the graphs of tasks (built on the
client, which holds no data) and their checks."""

from __future__ import annotations

import numbers
import operator

import dask
import dask.array as da
import numpy as np
import scipy.sparse as sp
from dask.base import tokenize
from dask.highlevelgraph import HighLevelGraph

from .. import _core
from .._input import _value_dtype, check_memory_budget, check_metric, check_n_neighbors
from .._pairwise import pairwise_distances
from . import _tasks

__all__ = ["kneighbors", "kneighbors_graph"]

_DEVICES = ("auto", "cpu", "cuda")
_MODES = ("connectivity", "distance")
DEFAULT_SPLIT_EVERY = 8


def _row_blocks(A, name):
    """``A`` as a Dask array of row blocks: 2-D, known row chunks, one chunk of columns."""
    if not isinstance(A, da.Array):
        raise TypeError(
            f"{name} must be a dask.array.Array of row blocks, got {type(A).__name__} (make one "
            f"with dask.array.from_array(..., chunks=(rows_per_block, -1)) or "
            f"spira.dask.from_files; spira.kneighbors takes in-memory input)"
        )
    if A.ndim != 2:
        raise ValueError(f"Expected a 2-D Dask array for {name}, got {A.ndim}-D")
    _value_dtype(A.dtype, name)  # TypeError for non-numeric data
    if any(np.isnan(c) for c in A.chunks[0]):
        raise ValueError(
            f"{name} has row blocks of unknown size; call {name}.compute_chunk_sizes() first "
            "(the global row index of every block must be known)"
        )
    if len(A.chunks[1]) > 1:
        A = A.rechunk({1: -1})  # every task reads whole rows
    return A


def _check_split_every(split_every):
    if split_every is None:
        return DEFAULT_SPLIT_EVERY
    if isinstance(split_every, (bool, np.bool_)) or not isinstance(split_every, numbers.Integral):
        raise TypeError(f"split_every must be an integer, got {type(split_every).__name__}")
    if split_every < 2:
        raise ValueError(f"split_every must be at least 2, got {split_every}")
    return int(split_every)


def _check_device(device):
    if not isinstance(device, str) or device not in _DEVICES:
        raise ValueError(f"device must be one of 'auto', 'cpu', 'cuda', got {device!r}")
    return device


def _starts(chunks):
    return np.concatenate([[0], np.cumsum(chunks)]).astype(np.int64).tolist()


def _block_tasks(X, Y, task, split_every, name):
    """The tasks of every query block: partial k-NN per (query block, index block), a tree of
    merges, the last merge. Returns the graph and the key of each query block's result."""
    xkeys = [row[0] for row in X.__dask_keys__()]
    qkeys = xkeys if Y is None else [row[0] for row in Y.__dask_keys__()]
    xs = _starts(X.chunks[0])
    qs = xs if Y is None else _starts(Y.chunks[0])
    dsk = {}
    results = []
    for qb, qkey in enumerate(qkeys):
        q_rows = (qs[qb], qs[qb + 1])
        out = (name + "-result", qb)
        results.append(out)
        if q_rows[0] == q_rows[1]:
            dsk[out] = (_tasks.empty_block, task.n_neighbors)
            continue
        parts = []
        for ib, xkey in enumerate(xkeys):
            i_rows = (xs[ib], xs[ib + 1])
            if i_rows[0] == i_rows[1]:
                continue
            kind = _tasks.CROSS
            if Y is None and ib == qb:
                kind = _tasks.EXCLUDE if task.exclude_self else _tasks.SELF_FIRST
            key = (name + "-part", qb, ib)
            dsk[key] = (_tasks.partial_knn, xkey, qkey, task, i_rows, q_rows, kind)
            parts.append(key)
        level = 0
        while len(parts) > split_every:
            merged = []
            for g in range(0, len(parts), split_every):
                key = (name + "-merge", qb, level, g // split_every)
                dsk[key] = (_tasks.merge_parts, parts[g : g + split_every], task)
                merged.append(key)
            parts, level = merged, level + 1
        dsk[out] = (_tasks.finalize, parts, task, q_rows)
    return dsk, results


def _plan(X, Y, n_neighbors, metric, p, exclude_self, device, memory_budget, split_every):
    """Checks every argument on the client (the data's own checks run in the tasks) and returns
    ``(X, Y, task, split_every)``."""
    metric, p = check_metric(metric, p)
    # The library's checks of the metric name and p, on one 1 x 1 matrix (ValueError otherwise).
    pairwise_distances(np.ones((1, 1)), metric=metric, p=p, device="cpu")
    device = _check_device(device)
    budget = check_memory_budget(memory_budget)
    split_every = _check_split_every(split_every)
    exclude_self = bool(exclude_self)
    if exclude_self and Y is not None:
        raise ValueError(
            "exclude_self applies when X is queried against itself; it cannot be combined with Y"
        )
    X = _row_blocks(X, "X")
    dtype = _value_dtype(X.dtype, "X")
    if Y is not None:
        Y = _row_blocks(Y, "Y")
        if X.shape[1] != Y.shape[1]:
            raise ValueError(
                f"X has {X.shape[1]} features (columns) but Y has {Y.shape[1]}; they must have "
                "the same number"
            )
        dtype = np.result_type(dtype, _value_dtype(Y.dtype, "Y"))
    k = check_n_neighbors(n_neighbors, X.shape[0] - (1 if exclude_self else 0), exclude_self)
    task = _tasks.KnnTask(
        n_neighbors=k, metric=metric, p=p, device=device, memory_budget=budget or None,
        dtype=np.dtype(dtype), largest=bool(_core.is_similarity(metric)),
        exclude_self=exclude_self,
    )
    return X, Y, task, split_every


def _knn_graph(X, Y, task, split_every):
    """The HighLevelGraph of the per-block results and the name of its layer."""
    name = "spira-kneighbors-" + tokenize(X, Y, task, split_every)
    dsk, results = _block_tasks(X, Y, task, split_every, name)
    deps = [X] if Y is None else [X, Y]
    return HighLevelGraph.from_collections(name, dsk, dependencies=deps), name, results


def _array(graph, layer, name, results, chunks, meta, fn, *args):
    """A Dask array whose block b is ``fn(result of query block b, *args)``."""
    dsk = {(name, b, 0): (fn, key, *args) for b, key in enumerate(results)}
    layers = dict(graph.layers)
    layers[name] = dsk
    deps = dict(graph.dependencies)
    deps[name] = {layer}
    return da.Array(HighLevelGraph(layers, deps), name, chunks, meta=meta)


def _persist(arrays, client):
    if client is None:
        return arrays
    return tuple(client.persist(list(arrays)))


def kneighbors(
    X,
    Y=None,
    *,
    n_neighbors,
    metric="euclidean",
    p=2,
    exclude_self=False,
    device="auto",
    memory_budget=None,
    split_every=None,
    client=None,
):
    """Exact k nearest neighbours among the rows of a Dask array, computed block by block.

    The result is byte for byte that of :func:`spira.kneighbors` on the whole matrix on the host
    backend, for any number of workers and any row blocks.

    Parameters
    ----------
    X : dask.array.Array of shape (n_samples, n_features)
        The index, in blocks of rows: chunks that are SciPy sparse matrices (any format) or NumPy
        arrays, with known sizes (``X.chunks``); several chunks of columns are joined first.
        :func:`spira.dask.from_files` builds one from files of row blocks.
    Y : dask.array.Array of shape (n_queries, n_features), default=None
        The queries, in blocks of rows. Default: the rows of ``X``.
    n_neighbors : int
        Neighbours per query, ``1 <= n_neighbors <= n_samples`` (``n_samples - 1`` with
        ``exclude_self``).
    metric : str, default="euclidean"
        One of ``spira.valid_metrics()``; ``"inner_product"`` keeps the largest values.
    p : float, default=2
        The Minkowski exponent (``p >= 1``); only ``metric="minkowski"`` reads it.
    exclude_self : bool, default=False
        Without ``Y``: leave each point's own index out of its neighbours (exact duplicates of
        the point remain). Cannot be combined with ``Y``.
    device : {"auto", "cpu", "cuda"}, default="auto"
        Where each task computes, resolved on its worker: ``"auto"`` uses the worker's GPU when
        spira has the CUDA backend and the worker sees a GPU (one per worker under dask-cuda),
        else its CPU. Byte identity with the single-process result holds on the host backend;
        CUDA distances may differ in their last bits (see Notes).
    memory_budget : int, default=None
        Bytes each task's k-NN may use for its tiles (see :func:`spira.kneighbors`).
    split_every : int, default=8
        Partial results merged per task in the tree of merges of a query block.
    client : distributed.Client, default=None
        When given, the graph is submitted at once (``client.persist``): the returned arrays are
        backed by results that stay on the workers. Otherwise the arrays are lazy and computed
        by whichever scheduler computes them.

    Returns
    -------
    distances : dask.array.Array of shape (n_queries, n_neighbors), dtype float32
    indices : dask.array.Array of shape (n_queries, n_neighbors), dtype int64
        Row blocks as those of the queries (``Y``, else ``X``); global row indices into ``X``;
        each row nearest first, ties by the smaller index, as :func:`spira.kneighbors`. Compute
        both with one call, ``dask.compute(distances, indices)``, so that the k-NN runs once.

    Raises
    ------
    TypeError
        ``X`` or ``Y`` is not a Dask array, or holds non-numeric data; arguments of the wrong
        type.
    ValueError
        Bad arguments, found at once: unknown metric, ``n_neighbors`` out of range, ``p < 1``
        for minkowski, columns of X and Y that differ, row blocks of unknown size. Bad data
        (NaN, infinity, negative values for the metrics of distributions) raises when computed,
        with the library's message prefixed by the rows of the task.

    Notes
    -----
    Each task computes the k-NN of one query block against one index block with
    :func:`spira.kneighbors` (``k_p = min(n_neighbors, rows of the block)`` neighbours, indices
    shifted to global rows); the partial results of a query block merge in a tree with
    :func:`spira.merge_knn`. No task holds more than one query block, one index block and the
    k-NN lists of its queries; the client holds only the graph. On the diagonal blocks
    (``Y=None``) the point itself is handled as :func:`spira.kneighbors` handles it: with
    ``exclude_self`` only its own index is left out; without it, it ranks first among the
    indices at its distance.

    Examples
    --------
    >>> import dask, dask.array as da, scipy.sparse as sp, spira, spira.dask
    >>> X = sp.random(1000, 50, density=0.1, format="csr", random_state=0)
    >>> Xd = da.from_array(X, chunks=(300, -1), asarray=False)
    >>> d, i = spira.dask.kneighbors(Xd, n_neighbors=5, metric="cosine")
    >>> d, i = dask.compute(d, i)
    >>> d0, i0 = spira.kneighbors(X, n_neighbors=5, metric="cosine")
    >>> bool((i == i0).all() and (d.tobytes() == d0.tobytes()))
    True
    """
    X, Y, task, split_every = _plan(X, Y, n_neighbors, metric, p, exclude_self, device,
                                    memory_budget, split_every)
    graph, layer, results = _knn_graph(X, Y, task, split_every)
    token = layer[len("spira-kneighbors-"):]
    rows = (X if Y is None else Y).chunks[0]
    chunks = (rows, (task.n_neighbors,))
    distances = _array(graph, layer, "spira-distances-" + token, results, chunks,
                       np.empty((0, 0), np.float32), operator.getitem, 0)
    indices = _array(graph, layer, "spira-indices-" + token, results, chunks,
                     np.empty((0, 0), np.int64), operator.getitem, 1)
    return _persist((distances, indices), client)


def kneighbors_graph(
    X,
    n_neighbors,
    *,
    mode="connectivity",
    include_self=False,
    metric="euclidean",
    p=2,
    device="auto",
    memory_budget=None,
    split_every=None,
    client=None,
    compute=False,
):
    """The exact k-NN graph of the rows of a Dask array, as a Dask array of CSR row blocks in
    the layout of :func:`spira.kneighbors_graph`.

    Parameters
    ----------
    X : dask.array.Array of shape (n_samples, n_features)
        The points, in blocks of rows (see :func:`kneighbors`).
    n_neighbors : int
        Neighbours per point (``n_samples - 1`` at most without ``include_self``).
    mode : {"connectivity", "distance"}, default="connectivity"
        ``"connectivity"``: every edge has the value 1; ``"distance"``: the distance.
    include_self : bool, default=False
        Whether each point counts as its own first neighbour (as in scikit-learn).
    metric, p, device, memory_budget, split_every, client
        As in :func:`kneighbors`.
    compute : bool, default=False
        False: return the lazy Dask array of row blocks (persisted on ``client`` when given).
        True: compute it and return one ``scipy.sparse.csr_matrix`` on the client.

    Returns
    -------
    graph : dask.array.Array or scipy.sparse.csr_matrix of shape (n_samples, n_samples)
        float64, ``n_neighbors`` entries per row listed nearest first, int64 indices. As a Dask
        array, one ``csr_matrix`` per row block of ``X`` (:func:`to_files` writes them one by
        one). With ``compute=True``, the matrix equal to :func:`spira.kneighbors_graph` of the
        whole matrix in every array (type, dtypes, order); ``graph.compute()`` gives the same
        entries, but :func:`scipy.sparse.vstack`, which stacks the blocks, narrows the indices
        to int32 when they fit.

    Examples
    --------
    >>> import dask.array as da, scipy.sparse as sp, spira, spira.dask
    >>> X = sp.random(1000, 50, density=0.1, format="csr", random_state=0)
    >>> G = spira.dask.kneighbors_graph(da.from_array(X, chunks=(250, -1), asarray=False), 5)
    >>> G.shape, G.compute().nnz
    ((1000, 1000), 5000)
    """
    if mode not in _MODES:
        raise ValueError(
            f'Unsupported mode, must be one of "connectivity" or "distance" but got {mode!r}'
        )
    X, _, task, split_every = _plan(X, None, n_neighbors, metric, p, not include_self, device,
                                    memory_budget, split_every)
    graph, layer, results = _knn_graph(X, None, task, split_every)
    token = layer[len("spira-kneighbors-"):]
    n = X.shape[0]
    meta = sp.csr_matrix((0, 0), dtype=np.float64)
    G = _array(graph, layer, f"spira-graph-{mode}-{token}", results, (X.chunks[0], (n,)), meta,
               _tasks.graph_block, n, mode == "connectivity")
    if compute:
        blocks = dask.compute(*G.to_delayed().ravel(), scheduler=client)
        return _stack_graph(blocks, n, task.n_neighbors)
    return _persist((G,), client)[0]


def _stack_graph(blocks, n, k):
    """The CSR row blocks of a k-NN graph (k entries per row) as one csr_matrix with int64
    indices, as :func:`spira.kneighbors_graph` returns it."""
    data = np.concatenate([b.data for b in blocks]) if blocks else np.empty(0)
    indices = np.concatenate([b.indices.astype(np.int64, copy=False) for b in blocks])
    indptr = np.arange(0, n * k + 1, k, dtype=np.int64)
    return sp.csr_matrix(sp.csr_array((data, indices, indptr), shape=(n, n)))
