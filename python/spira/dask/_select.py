"""spira.dask.select_k: the top-k of a vector (or of the rows of a matrix) held in Dask chunks;
the graph of tasks (built on the client, which holds no data) and its checks."""

from __future__ import annotations

import math
import numbers

import dask.array as da
import numpy as np
from dask.base import tokenize
from dask.highlevelgraph import HighLevelGraph

from .._input import _value_dtype
from . import _select_tasks as _tasks
from ._knn import _check_device, _check_split_every, _persist, _starts

__all__ = ["select_k"]

# Dr. Top-k's Rule 4 with the library's constant (docs/selection.md, "Sub-range length"): groups
# of alpha = sqrt(C n / k) elements, a power of two in [32, 2^16], and at least 4 k delegates.
RULE4_CONSTANT = 1024
MIN_GROUP, MAX_GROUP = 32, 1 << 16


def delegate_group(n, k):
    """The group length of the threshold pass for rows of ``n`` elements and ``k``, or None when
    even groups of ``MIN_GROUP`` would leave fewer than ``4 k`` delegates (k close to n / 128:
    the bound would prune little)."""
    alpha = 2 ** round(math.log2(math.sqrt(RULE4_CONSTANT * n / k)))
    alpha = min(max(alpha, MIN_GROUP), MAX_GROUP)
    while alpha > MIN_GROUP and n // alpha < 4 * k:
        alpha //= 2
    return alpha if n // alpha >= 4 * k else None


def _check_input(x, k):
    if not isinstance(x, da.Array):
        raise TypeError(
            f"x must be a dask.array.Array, got {type(x).__name__} (make one with "
            "dask.array.from_array; spira.select_k takes in-memory input)"
        )
    if x.ndim not in (1, 2):
        raise ValueError(f"Expected a 1-D or 2-D Dask array for x, got {x.ndim}-D")
    dtype = _value_dtype(x.dtype, "x")  # TypeError for non-numeric data
    if type(x._meta).__module__.split(".")[0] not in ("numpy", "cupy"):
        raise TypeError(
            f"x must have dense NumPy or CuPy chunks, got chunks of {type(x._meta).__name__} "
            "(spira.select_k of CSR rows selects among stored values only; see "
            "docs/distributed.md)"
        )
    if any(math.isnan(c) for cs in x.chunks for c in cs):
        raise ValueError("x has chunks of unknown size; call x.compute_chunk_sizes() first (the "
                         "global index of every chunk must be known)")
    if isinstance(k, (bool, np.bool_)) or not isinstance(k, numbers.Integral):
        raise TypeError(f"k must be an integer, got {type(k).__name__}")
    n = x.shape[-1]
    if not 1 <= k <= n:
        what = "the length of x" if x.ndim == 1 else "the columns of x"
        raise ValueError(f"k = {k} must be in [1, {n}] ({what})")
    return np.dtype(dtype), int(k)


def _graph(x, task, prune, split_every, name):
    """The tasks of every block of rows; returns the graph and the key of each block's
    ``(values, indices)``."""
    keys = x.__dask_keys__()
    if task.one_row:
        keys, row_chunks = [keys], (1,)
    else:
        row_chunks = x.chunks[0]
    col_starts = _starts(x.chunks[-1])
    # CuPy blocks of rows are selected whole on their GPU: no threshold pass for them.
    useful = len(col_starts) > 2 and (task.one_row or not task.gpu_chunks)
    group = delegate_group(task.n_cols, task.k) if prune and useful else None
    dsk, results = {}, []

    def tree(parts, rb, stage, fn, *args):
        level = 0
        while len(parts) > split_every:
            merged = []
            for g in range(0, len(parts), split_every):
                key = (f"{name}-{stage}", rb, level, g // split_every)
                dsk[key] = (fn, parts[g : g + split_every], *args)
                merged.append(key)
            parts, level = merged, level + 1
        return parts

    for rb, row in enumerate(keys):
        out = (name + "-result", rb)
        results.append(out)
        if row_chunks[rb] == 0:
            dsk[out] = (_tasks.empty, task)
            continue
        cols = [(cb, key) for cb, key in enumerate(row) if col_starts[cb + 1] > col_starts[cb]]
        if len(cols) == 1:  # whole rows in one chunk: no candidates travel
            dsk[out] = (_tasks.whole_rows, cols[0][1], task)
            continue
        bound = None
        if group is not None:  # the threshold pass: delegates, a tree, the k-th best
            parts = []
            for cb, key in cols:
                dsk[(name + "-delegates", rb, cb)] = (_tasks.delegates, key, task, group)
                parts.append((name + "-delegates", rb, cb))
            parts = tree(parts, rb, "delegate-merge", _tasks.merge_delegates, task)
            bound = (name + "-threshold", rb)
            dsk[bound] = (_tasks.threshold, parts, task)
        parts = []
        for cb, key in cols:
            dsk[(name + "-candidates", rb, cb)] = (_tasks.candidates, key, task,
                                                    col_starts[cb], bound)
            parts.append((name + "-candidates", rb, cb))
        parts = tree(parts, rb, "merge", _tasks.merge, task, False)
        dsk[out] = (_tasks.merge, parts, task, True)
    return dsk, results


def select_k(x, k, *, largest=True, sorted=True, prune=None, device="auto", split_every=None,
             client=None):
    """The ``k`` best values of a Dask vector (or of each row of a Dask matrix) and their global
    indices, computed chunk by chunk.

    The result is byte for byte that of :func:`spira.select_k` on the whole array, for any
    chunking and any number of workers.

    Parameters
    ----------
    x : dask.array.Array of shape (n,) or (n_rows, n_cols)
        Dense NumPy chunks, or CuPy chunks on the workers' GPUs, of known sizes. A vector may be cut anywhere; a matrix into blocks of
        rows, and of columns too (the candidates of a row's column blocks are then merged).
        Integer and boolean values are selected as float64, float16 as float32, as
        :func:`spira.select_k` does.
    k : int
        ``1 <= k <= n`` (``n_cols``).
    largest : bool, default=True
        Keep the largest values (else the smallest).
    sorted : bool, default=True
        Best first (by value, then the smaller index); else by increasing index.
    prune : bool, default=None
        Where a row is cut into several chunks: first find a bound on each row's k-th best value
        (the k-th best of Dr. Top-k's maximum delegates over all chunks, a small tree of its own)
        and give it to every chunk's task, which selects only among the elements not worse than
        it. Exact either way. None: prune NumPy chunks, not CuPy chunks (a GPU selects a chunk in
        about the time the extra round of tasks takes); see docs/distributed.md for what it saves
        and costs.
    device : {"auto", "cpu", "cuda"}, default="auto"
        Where each task selects, resolved on its worker (``"auto"``: its GPU when spira has the
        CUDA backend and the worker sees one). CuPy chunks are selected on their GPU (``"cpu"``
        is an error for them); their candidates come back to host memory, the rest stays there.
    split_every : int, default=8
        Partial results merged per task in the tree of merges.
    client : distributed.Client, default=None
        When given, the graph is submitted at once (``client.persist``) and the results stay on
        the workers. Otherwise the arrays are lazy.

    Returns
    -------
    values : dask.array.Array of shape (k,) or (n_rows, k), the input's float type
    indices : dask.array.Array of the same shape, int64
        Global indices (positions in the vector, columns of the matrix); a matrix's results in
        its blocks of rows. Compute both with one call, ``dask.compute(values, indices)``.

    Raises
    ------
    TypeError
        ``x`` is not a Dask array, holds non-numeric data or chunks that are neither NumPy nor
        CuPy arrays;
        ``k`` is not an integer.
    ValueError
        ``x`` is not 1-D or 2-D, has chunks of unknown size, ``k`` is out of range, bad
        ``device`` or ``split_every``.

    Notes
    -----
    The order is :func:`spira.select_k`'s: -0.0 equals +0.0, NaN is the worst value in both
    directions (selected only when fewer than ``k`` numbers remain), ties go to the smaller
    global index. Each chunk's task selects its best ``min(k, chunk length)`` with the local
    backend; only those candidates travel, and they merge in a tree (the library's selection of
    CSR rows whose column indices are the global indices). No task holds more than one chunk or
    ``split_every`` lists of ``k`` candidates per row; nothing gathers the vector.

    Examples
    --------
    >>> import dask, dask.array as da, numpy as np, spira, spira.dask
    >>> v = np.random.default_rng(0).integers(0, 50, 10_000).astype(np.float32)
    >>> values, indices = spira.dask.select_k(da.from_array(v, chunks=1500), 20)
    >>> values, indices = dask.compute(values, indices)
    >>> v0, i0 = spira.select_k(v, 20)
    >>> bool((indices == i0).all() and values.tobytes() == v0.tobytes())
    True
    """
    dtype, k = _check_input(x, k)
    device = _check_device(device)
    gpu_chunks = type(x._meta).__module__.split(".")[0] == "cupy"
    if gpu_chunks and device == "cpu":
        raise ValueError("device='cpu', but x has CuPy chunks (in GPU memory); use device='auto' "
                         "or 'cuda', or move the chunks to NumPy (x.map_blocks(cupy.asnumpy))")
    split_every = _check_split_every(split_every)
    task = _tasks.SelectTask(k=k, largest=bool(largest), sorted=bool(sorted), device=device,
                             dtype=dtype, n_cols=int(x.shape[-1]), one_row=x.ndim == 1,
                             gpu_chunks=gpu_chunks)
    prune = not gpu_chunks if prune is None else bool(prune)
    token = tokenize(x, task, prune, split_every)
    name = "spira-select-k-" + token
    dsk, results = _graph(x, task, prune, split_every, name)
    graph = HighLevelGraph.from_collections(name, dsk, dependencies=[x])
    if task.one_row:
        chunks = ((k,),)
        out_keys = [(0,)]
    else:
        chunks = (x.chunks[0], (k,))
        out_keys = [(rb, 0) for rb in range(len(results))]
    arrays = []
    for which, (label, meta) in enumerate([("values", np.empty((0,) * x.ndim, dtype)),
                                           ("indices", np.empty((0,) * x.ndim, np.int64))]):
        out = f"spira-select-k-{label}-{token}"
        layer = {(out, *ok): (_tasks.pick, key, which, task.one_row)
                 for ok, key in zip(out_keys, results)}
        layers = dict(graph.layers)
        layers[out] = layer
        deps = dict(graph.dependencies)
        deps[out] = {name}
        arrays.append(da.Array(HighLevelGraph(layers, deps), out, chunks, meta=meta))
    return _persist(tuple(arrays), client)
