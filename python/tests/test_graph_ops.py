"""spira.graph.symmetrize and spira.graph.fuzzy_union against SciPy's own algebra (max(G, Gᵀ),
G + Gᵀ - G∘Gᵀ) and against UMAP's fuzzy_simplicial_set, which applies the same union to its
membership strengths; input formats, sparse arrays, and errors."""

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import random_sparse

import spira
import spira.graph


def _graph(n=60, k=6, seed=3):
    """A directed k-NN graph of random points (distances as values), in scikit-learn's layout."""
    X = random_sparse(n, 12, 0.5, seed)
    return spira.kneighbors_graph(X, k, mode="distance")


def _assert_same(got, want, rtol=0.0):
    got, want = sp.csr_matrix(got), sp.csr_matrix(want)
    want.sum_duplicates()
    want.sort_indices()
    np.testing.assert_array_equal(got.indptr, want.indptr)
    np.testing.assert_array_equal(got.indices, want.indices)
    np.testing.assert_allclose(got.data, want.data, rtol=rtol, atol=0)


def test_symmetrize_is_the_elementwise_maximum_with_the_transpose():
    G = _graph()
    S = spira.graph.symmetrize(G)
    assert isinstance(S, sp.csr_matrix) and S.dtype == np.float32 and S.has_canonical_format
    _assert_same(S, G.maximum(G.T).astype(np.float32))
    assert (S != S.T).nnz == 0


def test_fuzzy_union_matches_scipy_algebra_and_formats():
    G = _graph(seed=4)
    G.data = np.exp(-G.data).astype(G.dtype)  # membership strengths in (0, 1]
    Gd = G.astype(np.float32).astype(np.float64)  # spira works on the float32 values
    want = (Gd + Gd.T - Gd.multiply(Gd.T)).astype(np.float32)
    for form in (G, G.tocoo(), G.tocsc(), sp.csr_array(G)):
        U = spira.graph.fuzzy_union(form)
        _assert_same(U, want)
        assert isinstance(U, sp.csr_array if isinstance(form, sp.sparray) else sp.csr_matrix)
    both = G.multiply(G.T).nnz
    assert both > 0  # two-sided edges, where the union differs from max


def test_fuzzy_union_equals_umaps_set_operation():
    umap_ = pytest.importorskip("umap.umap_")
    X = random_sparse(150, 20, 0.4, 5).toarray()
    knn_i, knn_d = spira.neighbors.umap_knn(X, 10)
    kw = dict(knn_indices=knn_i, knn_dists=knn_d)
    G, _, _ = umap_.fuzzy_simplicial_set(X, 10, 0, "euclidean", apply_set_operations=False, **kw)
    want, _, _ = umap_.fuzzy_simplicial_set(X, 10, 0, "euclidean", **kw)
    got = spira.graph.fuzzy_union(G)
    got.eliminate_zeros()  # UMAP drops the explicit zeros its strengths may hold
    _assert_same(got, want, rtol=1e-6)


def test_errors_name_the_problem():
    with pytest.raises(ValueError, match="square"):
        spira.graph.symmetrize(sp.random(4, 5, density=0.5, format="csr"))
    with pytest.raises(TypeError, match="SciPy sparse"):
        spira.graph.fuzzy_union(np.eye(3))
    G = sp.csr_matrix(np.array([[0, np.nan], [1.0, 0]]))
    with pytest.raises(ValueError, match="NaN"):
        spira.graph.symmetrize(G)


def test_docstring_examples_run():
    import doctest

    assert doctest.testmod(spira.graph).failed == 0
