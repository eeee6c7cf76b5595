"""spira: exact pairwise distances and exact k-nearest-neighbour graphs of sparse data.

The functions follow scikit-learn's conventions and accept SciPy sparse matrices and arrays
(CSR, CSC, COO, ...) and dense NumPy arrays; the work runs in spira's C++ library (host backend
with OpenMP, CUDA backend when compiled in) with the GIL released.

- :func:`kneighbors` -- ``(distances, indices)`` of the exact k nearest neighbours
- :func:`kneighbors_graph` -- the k-NN graph as a CSR matrix (scikit-learn's layout)
- :func:`pairwise_distances` -- the dense matrix of distances
- :func:`select_k` -- the k largest or smallest values of each row (dense or sparse)
- :func:`merge_knn` -- k-NN lists of disjoint index blocks merged into those of their union
- :func:`valid_metrics` -- the metric names accepted
- :func:`show_config` -- version, backends and GPU
- :mod:`spira.neighbors` -- ``KNeighborsTransformer`` (scikit-learn), :func:`umap_knn`,
  :func:`opentsne_knn`
- :mod:`spira.graph` -- :func:`~spira.graph.symmetrize` and UMAP's
  :func:`~spira.graph.fuzzy_union` of a graph
- :mod:`spira.dask` -- the same exact k-NN graphs on a Dask cluster (``import spira.dask``; needs
  ``dask[array]`` and ``distributed``, the ``spira[dask]`` extra)
"""

from . import _core, graph, neighbors
from ._device import show_config
from ._merge import merge_knn
from ._neighbors import kneighbors, kneighbors_graph
from ._pairwise import pairwise_distances
from ._select import select_k

__version__ = _core.version()

__all__ = [
    "__version__",
    "graph",
    "kneighbors",
    "kneighbors_graph",
    "merge_knn",
    "neighbors",
    "pairwise_distances",
    "select_k",
    "show_config",
    "valid_metrics",
]


def valid_metrics():
    """The metric names spira accepts: its 17 metrics and their aliases, sorted.

    The library parses the names itself (``spira::metric_from_string``), so this list, the
    C++ API and the command-line tool agree.
    """
    names = set(_core.metric_names())
    names.update(alias for alias, _ in _core.metric_aliases())
    return sorted(names)
