"""scikit-learn-compatible estimators and the layouts UMAP and openTSNE expect.

- :class:`KNeighborsTransformer` -- scikit-learn's ``KNeighborsTransformer`` contract with spira's
  exact k-NN (usable in pipelines with ``TSNE(metric="precomputed")``, ``Isomap``, and as
  ``scanpy.pp.neighbors(adata, transformer=...)``)
- :func:`umap_knn` -- UMAP's ``precomputed_knn`` arrays (each point its own first neighbour)
- :func:`opentsne_knn` -- openTSNE's ``PrecomputedNeighbors`` (the point itself left out)
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from . import _core
from ._input import check_metric
from ._neighbors import _MODES, kneighbors

__all__ = ["KNeighborsTransformer", "opentsne_knn", "umap_knn"]

try:  # scikit-learn is optional for the functions, required for the estimator
    from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
    from sklearn.utils.validation import check_is_fitted, validate_data

    _SKLEARN = True
except ImportError:  # pragma: no cover - exercised only without scikit-learn
    BaseEstimator = ClassNamePrefixFeaturesOutMixin = TransformerMixin = object
    _SKLEARN = False


class KNeighborsTransformer(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """The exact k-NN graph as a sparse matrix, with scikit-learn's ``KNeighborsTransformer``
    contract (scikit-learn >= 1.6).

    ``fit(X)`` keeps ``X`` as the index; ``transform(Y)`` returns the graph of the rows of ``Y``
    against it: ``n_neighbors + 1`` entries per row in ``"distance"`` mode (a query that is a
    fitted point finds itself first, at an explicit 0, as in scikit-learn) and ``n_neighbors``
    in ``"connectivity"`` mode, each row nearest first.

    Parameters
    ----------
    mode : {"distance", "connectivity"}, default="distance"
    n_neighbors : int, default=5
    metric : str, default="euclidean"
        One of ``spira.valid_metrics()``.
    p : float, default=2
        The Minkowski exponent, read by ``metric="minkowski"`` only.
    device : {"auto", "cpu", "cuda"}, default="auto"
    memory_budget : int, default=None
        As in :func:`spira.kneighbors`.
    progress : bool or callable, default=False
        As in :func:`spira.kneighbors`: a progress bar of ``transform`` (Ctrl-C ends it either
        way).

    Attributes
    ----------
    n_features_in_ : int
    n_samples_fit_ : int

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> from spira.neighbors import KNeighborsTransformer
    >>> X = sp.random(200, 40, density=0.1, format="csr", random_state=0)
    >>> G = KNeighborsTransformer(n_neighbors=10, metric="cosine").fit_transform(X)
    >>> G.shape, G.nnz
    ((200, 200), 2200)
    """

    def __init__(
        self,
        *,
        mode="distance",
        n_neighbors=5,
        metric="euclidean",
        p=2,
        device="auto",
        memory_budget=None,
        progress=False,
    ):
        self.mode = mode
        self.n_neighbors = n_neighbors
        self.metric = metric
        self.p = p
        self.device = device
        self.memory_budget = memory_budget
        self.progress = progress

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

    def fit(self, X, y=None):
        """Keeps ``X`` (n_samples, n_features; sparse or dense) as the index."""
        if not _SKLEARN:  # pragma: no cover
            raise ImportError("KNeighborsTransformer needs scikit-learn (pip install scikit-learn)")
        if self.mode not in _MODES:
            raise ValueError(
                f'Unsupported mode, must be one of "connectivity" or "distance" but got '
                f"{self.mode!r}"
            )
        check_metric(self.metric, self.p)
        _core.canonical_metric(self.metric)  # the library's parser: ValueError when unknown
        X = validate_data(self, X, accept_sparse="csr", dtype=[np.float64, np.float32])
        self._fit_X = X
        self.n_samples_fit_ = X.shape[0]
        self._n_features_out = self.n_samples_fit_
        return self

    def transform(self, X):
        """The graph of the rows of ``X`` against the fitted points: a CSR matrix of shape
        (n_queries, n_samples_fit), nearest first within each row, float64 values."""
        check_is_fitted(self)
        X = validate_data(self, X, accept_sparse="csr", dtype=[np.float64, np.float32], reset=False)
        k = self.n_neighbors + (1 if self.mode == "distance" else 0)
        distances, indices = kneighbors(
            self._fit_X,
            X,
            n_neighbors=k,
            metric=self.metric,
            p=self.p,
            device=self.device,
            memory_budget=self.memory_budget,
            progress=self.progress,
        )
        n, k = indices.shape
        if self.mode == "connectivity":
            data = np.ones(n * k, dtype=np.float64)
        else:
            data = distances.astype(np.float64).ravel()
        indptr = np.arange(0, n * k + 1, k, dtype=np.int64)
        return sp.csr_matrix(
            sp.csr_array((data, indices.ravel(), indptr), shape=(n, self.n_samples_fit_))
        )

    def fit_transform(self, X, y=None):
        """``fit(X).transform(X)``: every point finds itself first."""
        return self.fit(X).transform(X)


def umap_knn(
    X, n_neighbors, *, metric="euclidean", p=2, device="auto", memory_budget=None, progress=False
):
    """UMAP's ``precomputed_knn`` arrays: ``(indices, distances)``, each point its own first
    neighbour (counted in ``n_neighbors``, as UMAP's own search does), rows nearest first.

    Use as ``umap.UMAP(n_neighbors=n_neighbors, metric=metric,
    precomputed_knn=(indices, distances, None))``. Do not leave the point out: UMAP would read
    every row shifted by one neighbour and build a different graph without an error.

    Parameters
    ----------
    X, n_neighbors, metric, p, device, memory_budget, progress
        As in :func:`spira.kneighbors`.

    Returns
    -------
    indices : ndarray of shape (n_samples, n_neighbors), dtype int64
    distances : ndarray of shape (n_samples, n_neighbors), dtype float32
    """
    distances, indices = kneighbors(
        X,
        n_neighbors=n_neighbors,
        metric=metric,
        p=p,
        device=device,
        memory_budget=memory_budget,
        progress=progress,
    )
    return indices, distances


def opentsne_knn(
    X, n_neighbors, *, metric="euclidean", p=2, device="auto", memory_budget=None, progress=False
):
    """openTSNE's neighbours: each point's ``n_neighbors`` nearest other points (the point itself
    left out, as openTSNE's own search does), plain distances.

    Returns ``openTSNE.nearest_neighbors.PrecomputedNeighbors(indices, distances)`` when openTSNE
    is installed, else the ``(indices, distances)`` arrays it takes. openTSNE's default
    perplexity of 30 wants ``n_neighbors`` of about 90 (3 x perplexity).

    Parameters
    ----------
    X, n_neighbors, metric, p, device, memory_budget, progress
        As in :func:`spira.kneighbors` (``n_neighbors <= n_samples - 1``).
    """
    distances, indices = kneighbors(
        X,
        n_neighbors=n_neighbors,
        metric=metric,
        p=p,
        exclude_self=True,
        device=device,
        memory_budget=memory_budget,
        progress=progress,
    )
    try:
        from openTSNE.nearest_neighbors import PrecomputedNeighbors
    except ImportError:
        return indices, distances
    return PrecomputedNeighbors(indices, distances)
