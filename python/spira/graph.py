"""spira.graph: what follows a k-NN graph -- symmetrizing it, and UMAP's fuzzy set union.

Both are compositions of spira's GraphBLAS-style element-wise operations (docs/graphblas.md) of
the graph G with its transpose, computed by the library with the GIL released: on the host for a
SciPy matrix, on its GPU for a ``cupyx.scipy.sparse`` matrix (the result stays there), with the
same result bit for bit.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from . import _core
from . import _gpu
from ._gpu import framework_of
from ._input import _check_finite, canonical_sparse

__all__ = ["fuzzy_union", "symmetrize"]


def _device_graph_union(G, which):
    cupy, cusp = _gpu._cupy()
    if not cusp.issparse(G):
        raise TypeError(f"G in GPU memory must be a cupyx.scipy.sparse matrix, got "
                        f"{type(G).__name__}")
    if G.ndim != 2 or G.shape[0] != G.shape[1]:
        raise ValueError(f"G must be a square matrix (a graph), got shape {G.shape}")
    if G.dtype.kind not in "biuf":
        raise TypeError(f"G must hold real numbers, got dtype {G.dtype}")
    m = G.tocsr()
    if not m.has_canonical_format:
        m = m.copy()
        m.sum_duplicates()
    data = cupy.ascontiguousarray(m.data, dtype=cupy.float32)
    if not bool(cupy.isfinite(data).all()):
        _check_finite(data.get(), "G")
    n = m.shape[0]
    arrays = (n, n, cupy.ascontiguousarray(m.indptr, dtype=cupy.int64),
              cupy.ascontiguousarray(m.indices, dtype=cupy.int64), data)
    with cupy.cuda.Device(m.data.device.id):
        indptr, indices, values = (cupy.from_dlpack(a) for a in _core.graph_union(arrays, which))
        if int(indptr[-1]) > np.iinfo(np.int32).max:
            raise ValueError(
                f"the result has {int(indptr[-1])} entries, more than a cupyx.scipy.sparse matrix "
                "(int32 indices) can hold"
            )
        return cusp.csr_matrix((values, indices.astype(cupy.int32), indptr.astype(cupy.int32)),
                               shape=(n, n))


def _graph_union(G, which):
    framework = framework_of(G)
    if framework == "cupy":
        return _device_graph_union(G, which)
    if framework is not None:
        raise TypeError(
            f"spira.graph.{which} takes a SciPy or cupyx.scipy.sparse matrix, got {type(G).__name__}"
        )
    if not sp.issparse(G):
        raise TypeError(f"G must be a SciPy sparse matrix or array, got {type(G).__name__}")
    if G.ndim != 2 or G.shape[0] != G.shape[1]:
        raise ValueError(f"G must be a square matrix (a graph), got shape {G.shape}")
    if G.dtype.kind not in "biuf":
        raise TypeError(f"G must hold real numbers, got dtype {G.dtype}")
    m = canonical_sparse(G, np.float32)
    _check_finite(m.data, "G")
    n = m.shape[0]
    arrays = (n, n, np.ascontiguousarray(m.indptr, dtype=np.int64),
              np.ascontiguousarray(m.indices, dtype=np.int64),
              np.ascontiguousarray(m.data, dtype=np.float32))
    indptr, indices, data = _core.graph_union(arrays, which)
    out = sp.csr_array((data, indices, indptr), shape=(n, n))
    return out if isinstance(G, sp.sparray) else sp.csr_matrix(out)


def symmetrize(G):
    """max(G, Gᵀ): an edge where either end lists the other, both directions with the larger value.

    Parameters
    ----------
    G : scipy.sparse matrix or array, or cupyx.scipy.sparse matrix, of shape (n, n)
        A graph, e.g. :func:`spira.kneighbors_graph` (any format; duplicate entries are summed,
        as SciPy does). Values are taken as float32. A CuPy matrix is computed on its GPU.

    Returns
    -------
    scipy.sparse.csr_matrix (csr_array for a sparse array; cupyx.scipy.sparse.csr_matrix for a
    CuPy input) of shape (n, n), float32
        Canonical: sorted column indices, no duplicates, int64 indices (int32 for CuPy, whose
        sparse matrices hold no other).

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp, spira.graph
    >>> G = sp.csr_matrix(np.array([[0, 2.0], [0, 0]]))
    >>> spira.graph.symmetrize(G).toarray()
    array([[0., 2.],
           [2., 0.]], dtype=float32)
    """
    return _graph_union(G, "symmetrize")


def fuzzy_union(G):
    """UMAP's fuzzy set union G + Gᵀ - G∘Gᵀ of a graph of membership strengths in [0, 1].

    Where both directions hold a strength, ``a + b - a b``; where one does, that strength; the
    symmetric graph UMAP embeds (``umap.umap_.fuzzy_simplicial_set`` with its default
    ``set_op_mix_ratio=1``).

    Parameters
    ----------
    G : scipy.sparse matrix or array, or cupyx.scipy.sparse matrix, of shape (n, n)
        Membership strengths, e.g. exp(-(d - rho) / sigma) of a k-NN graph, taken as float32;
        the union is computed in double and rounded once. A CuPy matrix is computed on its GPU.

    Returns
    -------
    scipy.sparse.csr_matrix (csr_array for a sparse array; cupyx.scipy.sparse.csr_matrix for a
    CuPy input) of shape (n, n), float32
        Canonical, int64 indices (int32 for CuPy).

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp, spira.graph
    >>> G = sp.csr_matrix(np.array([[0, 0.5], [0.5, 0]]))
    >>> spira.graph.fuzzy_union(G).toarray()
    array([[0.  , 0.75],
           [0.75, 0.  ]], dtype=float32)
    """
    return _graph_union(G, "fuzzy_union")
