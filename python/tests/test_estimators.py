"""spira.neighbors: KNeighborsTransformer against scikit-learn's own (check_estimator, the output
layout, pipelines), and the UMAP / openTSNE layouts."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import random_sparse
from sklearn.manifold import TSNE, Isomap
from sklearn.neighbors import KNeighborsTransformer as SkTransformer
from sklearn.pipeline import make_pipeline
from sklearn.utils.estimator_checks import check_estimator

import spira
from spira.neighbors import KNeighborsTransformer, opentsne_knn, umap_knn


@pytest.fixture(scope="module")
def points():
    # Continuous random values: no ties, so the neighbour lists must agree exactly.
    return random_sparse(90, 16, 0.5, 5)


def failed_checks(estimator):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = check_estimator(estimator, on_fail=None)
    return {r["check_name"] for r in results if r["exception"] is not None}


def test_check_estimator_fails_no_more_than_sklearns_own():
    ours = failed_checks(KNeighborsTransformer())
    theirs = failed_checks(SkTransformer())
    assert ours <= theirs, f"checks failed by spira only: {sorted(ours - theirs)}"


@pytest.mark.parametrize("mode", ["distance", "connectivity"])
@pytest.mark.parametrize("metric", ["euclidean", "manhattan", "cosine"])
def test_layout_equals_sklearn(points, mode, metric):
    queries = random_sparse(12, 16, 0.5, 6)
    for fit_on, transform in ((points, points), (points, queries)):
        G = KNeighborsTransformer(mode=mode, n_neighbors=7, metric=metric).fit(fit_on)
        S = SkTransformer(mode=mode, n_neighbors=7, metric=metric).fit(fit_on.toarray())
        g, s = G.transform(transform), S.transform(transform.toarray())
        assert type(g) is type(s) is sp.csr_matrix
        assert g.shape == s.shape and g.dtype == s.dtype == np.float64
        np.testing.assert_array_equal(g.indptr, s.indptr)
        np.testing.assert_array_equal(g.indices, s.indices)  # nearest first, not by column
        np.testing.assert_allclose(g.data, s.data, rtol=1e-5, atol=1e-6)
    # fit_transform: every point first, with an explicit 0 in distance mode.
    g = KNeighborsTransformer(mode=mode, n_neighbors=7, metric=metric).fit_transform(points)
    np.testing.assert_array_equal(g.indices[g.indptr[:-1]], np.arange(points.shape[0]))
    per_row = 8 if mode == "distance" else 7
    np.testing.assert_array_equal(np.diff(g.indptr), per_row)
    if mode == "distance":
        np.testing.assert_array_equal(g.data[g.indptr[:-1]], 0.0)


def test_isomap_pipeline_equals_sklearns(points):
    X = points.toarray()
    ours = make_pipeline(KNeighborsTransformer(n_neighbors=10), Isomap(metric="precomputed"))
    theirs = make_pipeline(SkTransformer(n_neighbors=10), Isomap(metric="precomputed"))
    a, b = ours.fit_transform(points), theirs.fit_transform(X)
    # The same graph gives the same embedding up to the sign of each component.
    for c in range(a.shape[1]):
        sign = np.sign(a[0, c]) * np.sign(b[0, c]) or 1.0
        np.testing.assert_allclose(a[:, c], sign * b[:, c], rtol=1e-4, atol=1e-4)


def test_tsne_pipeline_equals_tsne_on_sklearns_graph(points):
    pipe = make_pipeline(
        KNeighborsTransformer(n_neighbors=31, metric="cosine"),
        TSNE(metric="precomputed", perplexity=10, init="random", random_state=0, max_iter=250),
    )
    Y = pipe.fit_transform(points)
    assert Y.shape == (points.shape[0], 2) and np.isfinite(Y).all()
    # The oracle: TSNE on scikit-learn's graph with its distances rounded to float32 as spira
    # returns them (TSNE amplifies differences in the last bits of float64 input into a different
    # embedding; with the same float32 distances it is the same embedding, bit for bit).
    S = SkTransformer(n_neighbors=31, metric="cosine").fit_transform(points.toarray())
    S.data = S.data.astype(np.float32).astype(np.float64)
    S.data[S.indptr[:-1]] = 0.0  # each point first, exactly 0 from itself
    oracle = TSNE(metric="precomputed", perplexity=10, init="random", random_state=0,
                  max_iter=250).fit_transform(S)
    np.testing.assert_array_equal(Y, oracle)


def test_bad_parameters_raise_at_fit(points):
    with pytest.raises(ValueError, match="mode"):
        KNeighborsTransformer(mode="weights").fit(points)
    with pytest.raises(ValueError, match="metric"):
        KNeighborsTransformer(metric="no_such_metric").fit(points)
    with pytest.raises(ValueError):
        KNeighborsTransformer(n_neighbors=200).fit(points).transform(points)


def test_umap_knn_lists_each_point_first(points):
    indices, distances = umap_knn(points, 6, metric="cosine")
    d, i = spira.kneighbors(points, n_neighbors=6, metric="cosine")
    np.testing.assert_array_equal(indices, i)
    np.testing.assert_array_equal(distances, d)
    np.testing.assert_array_equal(indices[:, 0], np.arange(points.shape[0]))
    assert indices.dtype == np.int64 and distances.dtype == np.float32


def test_opentsne_knn_leaves_the_point_out(points):
    result = opentsne_knn(points, 6)
    if isinstance(result, tuple):
        indices, distances = result
    else:  # openTSNE installed: a PrecomputedNeighbors
        indices, distances = result.indices, result.distances
    assert indices.shape == (points.shape[0], 6)
    assert not (indices == np.arange(points.shape[0])[:, None]).any()
    assert (np.diff(distances, axis=1) >= 0).all()
