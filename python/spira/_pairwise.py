"""Exact pairwise distances: spira.pairwise_distances."""

from __future__ import annotations

import numpy as np

from . import _core
from ._device import placement
from ._gpu import empty, synchronize
from ._input import PAIRWISE_NAMES, check_memory_budget, check_metric, python_names, read_operands
from ._progress import check_progress, reporter

__all__ = ["pairwise_distances"]


def pairwise_distances(
    X, Y=None, *, metric="euclidean", p=2, device="auto", memory_budget=None, progress=False
):
    """Distances between every row of ``X`` and every row of ``Y``.

    Parameters
    ----------
    X : {sparse matrix, sparse array, array-like} of shape (n_samples_X, n_features)
        SciPy sparse input of any format, int32 or int64 indices, or a dense 2-D array; with
        the CUDA backend also CuPy / ``cupyx.scipy.sparse`` / torch input in GPU memory, whose
        distances are computed on its GPU and returned there (memory_budget does not apply).
    Y : {sparse matrix, sparse array, array-like} of shape (n_samples_Y, n_features), default=None
        Default: ``X``.
    metric : str, default="euclidean"
        One of ``spira.valid_metrics()`` (SciPy / scikit-learn names and aliases).
        ``"inner_product"`` gives similarities (dot products), not distances.
    p : float, default=2
        The Minkowski exponent (``p >= 1``); only ``metric="minkowski"`` reads it.
    device : {"auto", "cpu", "cuda"}, default="auto"
        Where to compute (see :func:`kneighbors`).
    memory_budget : int, default=None
        CUDA only: bytes of device memory for one block of distances (default: half the free
        device memory, at most 1 GiB); the rows of X go through the GPU in blocks of that size.
        On the host the distances are written straight into the result and it does not apply.
    progress : bool or callable, default=False
        ``True`` shows a progress bar of the rows of ``X`` done (tqdm's when installed, else a
        line on stderr); a callable is called as ``progress(done, total)`` after each block of
        rows. Ctrl-C ends a long call between blocks with ``KeyboardInterrupt`` either way.

    Returns
    -------
    distances : ndarray of shape (n_samples_X, n_samples_Y)
        float32 for float32 input, float64 otherwise: spira computes in the input's float type
        (integer and boolean input counts as float64). Note the size: n_samples_X x
        n_samples_Y values are allocated; use :func:`kneighbors` for large inputs.

    Raises
    ------
    ValueError, TypeError, MemoryError, RuntimeError, KeyboardInterrupt
        As in :func:`kneighbors`.

    Examples
    --------
    >>> import numpy as np, spira
    >>> X = np.array([[0.0, 1.0], [1.0, 1.0]])
    >>> spira.pairwise_distances(X, metric="manhattan")
    array([[0., 1.],
           [1., 0.]])
    """
    metric, p = check_metric(metric, p)
    cuda, framework = placement(device, X=X, Y=Y)
    budget = check_memory_budget(memory_budget)
    progress = check_progress(progress)
    x, y, on = read_operands(X, Y, framework)
    y = x if y is None else y
    dtype = "float64" if x[4].itemsize == 8 else "float32"
    if framework is None:
        out = np.empty((x[0], y[0]), dtype=dtype)
    else:
        out = empty((x[0], y[0]), dtype, framework, on)
        synchronize(framework, on)
    with reporter(progress, "spira.pairwise_distances", x[0]) as report, python_names(
        PAIRWISE_NAMES
    ):
        _core.pairwise_distances(x, y, out, metric, p, cuda, budget, report)
    return out
