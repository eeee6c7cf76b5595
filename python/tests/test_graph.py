"""spira.kneighbors_graph against sklearn.neighbors.kneighbors_graph: the same matrix type, shape,
dtypes, entries per row and order within a row (nearest first), in both modes, with and without
the point itself."""

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import random_sparse
from sklearn.neighbors import kneighbors_graph as sk_kneighbors_graph

import spira


@pytest.fixture(scope="module")
def points():
    # Continuous random values: no ties, so the neighbour lists must agree exactly.
    return random_sparse(80, 20, 0.4, 11)


@pytest.mark.parametrize("mode", ["connectivity", "distance"])
@pytest.mark.parametrize("include_self", [False, True])
@pytest.mark.parametrize("metric", ["euclidean", "manhattan", "cosine"])
def test_layout_equals_sklearn(points, mode, include_self, metric):
    k = 6
    G = spira.kneighbors_graph(points, k, mode=mode, include_self=include_self, metric=metric)
    S = sk_kneighbors_graph(points.toarray(), k, mode=mode, include_self=include_self,
                            metric=metric)
    assert type(G) is type(S) is sp.csr_matrix
    assert G.shape == S.shape == (80, 80)
    assert G.dtype == S.dtype == np.float64
    assert G.indices.dtype == S.indices.dtype and G.indptr.dtype == S.indptr.dtype
    np.testing.assert_array_equal(G.indptr, S.indptr)
    np.testing.assert_array_equal(np.diff(G.indptr), k)
    # Entries in the same order (nearest first), not sorted by column.
    np.testing.assert_array_equal(G.indices, S.indices)
    np.testing.assert_allclose(G.data, S.data, rtol=1e-5, atol=1e-6)
    rows = np.arange(80)
    first = G.indices[G.indptr[:-1]]
    if include_self:
        np.testing.assert_array_equal(first, rows)
        if mode == "distance":
            assert (G.data[G.indptr[:-1]] == 0).all()  # the point itself, an explicit 0
    else:
        assert not np.any(G.indices.reshape(80, k) == rows[:, None])


def test_graph_of_similarity_lists_largest_first(points):
    G = spira.kneighbors_graph(points, 4, mode="distance", metric="inner_product")
    vals = G.data.reshape(-1, 4)
    assert (np.diff(vals, axis=1) <= 0).all()
    D = points @ points.T
    D = D.toarray()
    np.fill_diagonal(D, -np.inf)
    np.testing.assert_allclose(vals[:, 0], D.max(axis=1), rtol=1e-5)


def test_graph_rejects_unknown_mode(points):
    with pytest.raises(ValueError, match="mode"):
        spira.kneighbors_graph(points, 3, mode="weights")
