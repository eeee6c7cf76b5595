"""Exact k-nearest neighbours: spira.kneighbors and spira.kneighbors_graph."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from . import _core
from ._device import placement
from ._gpu import framework_of, from_core, synchronize
from ._input import (
    KNN_NAMES,
    check_memory_budget,
    check_metric,
    check_n_neighbors,
    python_names,
    read_operands,
)
from ._progress import check_progress, reporter

__all__ = ["kneighbors", "kneighbors_graph"]

_MODES = ("connectivity", "distance")


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
    progress=False,
):
    """Exact k nearest neighbours among the rows of ``X``.

    Parameters
    ----------
    X : {sparse matrix, sparse array, array-like} of shape (n_samples, n_features)
        The index: the points among which neighbours are searched. SciPy sparse input of any
        format (CSR is used as it is), int32 or int64 indices; dense input is converted to CSR.
        With the CUDA backend also CuPy arrays, ``cupyx.scipy.sparse`` matrices and torch
        tensors (dense or sparse CSR/COO) in GPU memory: computed on their GPU, results there.
    Y : {sparse matrix, sparse array, array-like} of shape (n_queries, n_features), default=None
        The queries. Default: the rows of ``X`` themselves.
    n_neighbors : int
        Neighbours per query, ``1 <= n_neighbors <= n_samples`` (``n_samples - 1`` with
        ``exclude_self``).
    metric : str, default="euclidean"
        One of ``spira.valid_metrics()``: the SciPy / scikit-learn names (``"cosine"``,
        ``"manhattan"``, ...) and the aliases ``"cityblock"``, ``"l1"``, ``"l2"``.
        ``"inner_product"`` is a similarity: its nearest neighbours have the largest values.
    p : float, default=2
        The Minkowski exponent (``p >= 1``); only ``metric="minkowski"`` reads it.
    exclude_self : bool, default=False
        Without ``Y``: leave each point's own index out of its neighbours (exact duplicates of
        the point remain, at distance 0). Cannot be combined with ``Y``.
    device : {"auto", "cpu", "cuda"}, default="auto"
        Where to compute: ``"auto"`` uses CUDA when it is compiled in and a GPU is visible.
    memory_budget : int, default=None
        Bytes the distance tiles and the running top-k lists may use. Default: half of the
        memory available to the process (at most a quarter of physical memory) on the host,
        half the free device memory on CUDA.
    progress : bool or callable, default=False
        ``True`` shows a progress bar of the query rows done (tqdm's when tqdm is installed,
        else a line on stderr); a callable is called as ``progress(done, total)`` after each
        tile, and may raise to stop the call. Either way Ctrl-C ends a long call between tiles
        with ``KeyboardInterrupt``.

    Returns
    -------
    distances : ndarray of shape (n_queries, n_neighbors), dtype float32
        (A CuPy array or torch tensor on the input's GPU when the input is in CUDA memory: see
        "GPU arrays" in docs/python.md.)
        The distances (similarities for ``inner_product``), in the metric's own units
        (``euclidean`` is not squared). Computed in the input's float type, rounded to float32.
    indices : ndarray of shape (n_queries, n_neighbors), dtype int64
        Row indices into ``X``. Each row is nearest first; among equal float32 distances the
        smaller index comes first. Without ``Y`` and ``exclude_self``, each point is its own
        first neighbour (exact duplicates tie with it at distance 0 and follow in index order).

    Raises
    ------
    ValueError
        Bad values: unknown metric, ``n_neighbors`` out of range, columns of X and Y that
        differ, NaN or infinity, negative values for ``jensenshannon``, ``hellinger`` and
        ``kl_divergence``, minkowski ``p < 1``.
    TypeError
        Input that is not numeric, or arguments of the wrong type.
    MemoryError
        The memory budget or the machine cannot hold the work.
    RuntimeError
        ``device="cuda"`` without the CUDA backend or a GPU.
    KeyboardInterrupt
        Ctrl-C during the call (the work stops at the end of the current tile).

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp, spira
    >>> X = sp.random(100, 50, density=0.1, format="csr", random_state=0)
    >>> distances, indices = spira.kneighbors(X, n_neighbors=5, metric="cosine")
    >>> distances.shape, indices.dtype
    ((100, 5), dtype('int64'))
    """
    metric, p = check_metric(metric, p)
    cuda, framework = placement(device, X=X, Y=Y)
    budget = check_memory_budget(memory_budget)
    progress = check_progress(progress)
    exclude_self = bool(exclude_self)
    if exclude_self and Y is not None:
        raise ValueError(
            "exclude_self applies when X is queried against itself; it cannot be combined with Y"
        )
    x, y, on = read_operands(X, Y, framework)
    k = check_n_neighbors(n_neighbors, x[0] - (1 if exclude_self else 0), exclude_self)
    n_queries = (x if y is None else y)[0]
    if framework is not None:
        synchronize(framework, on)
    with reporter(progress, "spira.kneighbors", n_queries) as report, python_names(KNN_NAMES):
        distances, indices = _core.kneighbors(x, y, k, metric, p, exclude_self, cuda, budget, report)
    if framework is not None:
        return from_core(distances, framework), from_core(indices, framework)
    return distances, indices


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
    progress=False,
):
    """The exact k-NN graph of the rows of ``X`` as a sparse matrix, in the layout of
    :func:`sklearn.neighbors.kneighbors_graph`.

    Parameters
    ----------
    X : {sparse matrix, sparse array, array-like} of shape (n_samples, n_features)
        The points (see :func:`kneighbors` for the accepted types).
    n_neighbors : int
        Neighbours per point (``n_samples - 1`` at most without ``include_self``).
    mode : {"connectivity", "distance"}, default="connectivity"
        ``"connectivity"``: every edge has the value 1; ``"distance"``: the distance.
    include_self : bool, default=False
        Whether each point counts as its own first neighbour (an entry at distance 0, stored
        explicitly in ``"distance"`` mode). Without it the point's own index is left out.
    metric, p, device, memory_budget, progress
        As in :func:`kneighbors`.

    Returns
    -------
    graph : scipy.sparse.csr_matrix of shape (n_samples, n_samples), dtype float64
        ``n_neighbors`` entries per row, listed nearest first (not by column), int64 indices:
        the same layout, dtype and order as scikit-learn's ``kneighbors_graph``. For input in
        GPU memory: a ``cupyx.scipy.sparse.csr_matrix`` (CuPy input; int32 indices, as cupyx
        stores them) or a torch sparse CSR tensor (torch input) on that GPU, same layout.

    Examples
    --------
    >>> import scipy.sparse as sp, spira
    >>> X = sp.random(100, 50, density=0.1, format="csr", random_state=0)
    >>> G = spira.kneighbors_graph(X, 5, mode="distance", metric="manhattan")
    >>> G.shape, G.nnz
    ((100, 100), 500)
    """
    if mode not in _MODES:
        raise ValueError(
            f'Unsupported mode, must be one of "connectivity" or "distance" but got {mode!r}'
        )
    distances, indices = kneighbors(
        X,
        n_neighbors=n_neighbors,
        metric=metric,
        p=p,
        exclude_self=not include_self,
        device=device,
        memory_budget=memory_budget,
        progress=progress,
    )
    n, k = indices.shape
    framework = framework_of(indices)
    if framework is not None:
        return _device_graph(distances, indices, mode, framework)
    if mode == "connectivity":
        data = np.ones(n * k, dtype=np.float64)
    else:
        data = distances.astype(np.float64).ravel()
    indptr = np.arange(0, n * k + 1, k, dtype=np.int64)
    # Built as scikit-learn builds it: a csr_array (which keeps the int64 indices) turned into a
    # csr_matrix.
    return sp.csr_matrix(sp.csr_array((data, indices.ravel(), indptr), shape=(n, n)))


def _device_graph(distances, indices, mode, framework):
    """kneighbors_graph's layout for results on a GPU: a ``cupyx.scipy.sparse.csr_matrix``
    (int32 indices, as cupyx stores them) or a torch sparse CSR tensor, float64 values."""
    n, k = indices.shape
    if framework == "torch":
        import torch

        dev = indices.device
        data = (
            torch.ones(n * k, dtype=torch.float64, device=dev)
            if mode == "connectivity"
            else distances.to(torch.float64).reshape(-1)
        )
        indptr = torch.arange(0, n * k + 1, k, dtype=torch.int64, device=dev)
        return torch.sparse_csr_tensor(indptr, indices.reshape(-1), data, size=(n, n))
    import cupy
    import cupyx.scipy.sparse as cusp

    if n * k >= 2**31:
        raise ValueError(
            f"the graph has {n * k} entries, more than a cupyx.scipy.sparse matrix (int32 "
            "indices) can hold; use spira.kneighbors for its (distances, indices) arrays"
        )
    with cupy.cuda.Device(indices.device.id):
        data = (
            cupy.ones(n * k, dtype=cupy.float64)
            if mode == "connectivity"
            else distances.astype(cupy.float64).ravel()
        )
        indptr = cupy.arange(0, n * k + 1, k, dtype=cupy.int32)
        return cusp.csr_matrix((data, indices.ravel().astype(cupy.int32), indptr), shape=(n, n))
