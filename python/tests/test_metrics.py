"""Every metric against SciPy's cdist (pairwise_distances) and against a brute force
(kneighbors): scikit-learn's NearestNeighbors(algorithm="brute") where it has the metric, the
dense oracle of conftest.py otherwise."""

import numpy as np
import pytest
from conftest import (
    BOOLEAN,
    METRICS,
    MINKOWSKI_P,
    assert_knn_matches,
    assert_same_run_to_run,
    oracle,
    pick,
)
from sklearn.neighbors import VALID_METRICS, NearestNeighbors

import spira

SKLEARN_NAME = {"manhattan": "manhattan", "minkowski": "minkowski"}


def p_of(metric):
    return MINKOWSKI_P if metric == "minkowski" else 2


def test_valid_metrics_are_the_library_names_and_aliases():
    names = spira.valid_metrics()
    assert set(METRICS) <= set(names)
    assert {"cityblock", "l1", "l2"} <= set(names)
    assert len(names) == 17 + 3


@pytest.mark.parametrize("metric", METRICS)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_pairwise_distances_equal_cdist(data, metric, dtype):
    X, Y = pick(data, metric)
    X, Y = X.astype(dtype), Y.astype(dtype)
    got = spira.pairwise_distances(X, Y, metric=metric, p=p_of(metric), device="cpu")
    assert got.dtype == dtype and got.shape == (X.shape[0], Y.shape[0])
    want = oracle(metric, X.astype(np.float64), Y.astype(np.float64))
    tol = dict(rtol=1e-5, atol=1e-6) if dtype == np.float64 else dict(rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(got, want, **tol)


@pytest.mark.parametrize("metric", METRICS)
def test_pairwise_distances_without_y_is_x_against_itself(data, metric):
    X, _ = pick(data, metric)
    got = spira.pairwise_distances(X, metric=metric, p=p_of(metric))
    np.testing.assert_allclose(got, oracle(metric, X, X), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("metric", METRICS)
@pytest.mark.parametrize("k", [1, 7, 25])
def test_kneighbors_with_queries_equals_brute_force(data, metric, k):
    X, Y = pick(data, metric)
    largest = metric == "inner_product"
    d, i = spira.kneighbors(X, Y, n_neighbors=k, metric=metric, p=p_of(metric))
    D = oracle(metric, Y, X)
    assert_knn_matches(d, i, D, k, largest=largest, rtol=1e-5, atol=1e-5)
    if metric in VALID_METRICS["brute"] and metric not in {"hamming"}:
        # scikit-learn's own brute force: the same sorted distances.
        x, y = (X.toarray() != 0, Y.toarray() != 0) if metric in BOOLEAN else (X.toarray(),
                                                                                 Y.toarray())
        kw = {"p": MINKOWSKI_P} if metric == "minkowski" else {}
        nn = NearestNeighbors(n_neighbors=k, algorithm="brute", metric=metric, **kw).fit(x)
        sk_d, sk_i = nn.kneighbors(y)
        np.testing.assert_allclose(d, sk_d, rtol=1e-5, atol=1e-5)
        assert_knn_matches(sk_d.astype(np.float32), sk_i, D, k, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("metric", METRICS)
def test_kneighbors_self_first_and_exclude_self(data, metric):
    X, _ = pick(data, metric)
    n, k = X.shape[0], 5
    largest = metric == "inner_product"
    D = oracle(metric, X, X)
    d, i = spira.kneighbors(X, n_neighbors=k, metric=metric, p=p_of(metric))
    if metric not in {"russellrao", "kl_divergence", "inner_product"}:
        # d(x, x) = 0 is the smallest possible distance: each point comes first (the library's
        # promise), unless an exact duplicate with a smaller index ties with it.
        first_ok = (i[:, 0] == np.arange(n)) | (np.isclose(d[:, 0], 0) & (i[:, 0] < np.arange(n)))
        assert first_ok.all()
    d2, i2 = spira.kneighbors(X, n_neighbors=k, metric=metric, p=p_of(metric), exclude_self=True)
    assert_knn_matches(d2, i2, D, k, largest=largest, rtol=1e-5, atol=1e-5,
                       exclude=np.arange(n))


def test_hamming_against_sklearn_brute(data):
    # scikit-learn's hamming on dense float data is SciPy's: the fraction of differing columns.
    X, Y, _, _ = data
    d, _ = spira.kneighbors(X, Y, n_neighbors=4, metric="hamming")
    nn = NearestNeighbors(n_neighbors=4, algorithm="brute", metric="hamming").fit(X.toarray())
    sk_d, _ = nn.kneighbors(Y.toarray())
    np.testing.assert_allclose(d, sk_d, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("alias,name", [("cityblock", "manhattan"), ("l1", "manhattan"),
                                        ("l2", "euclidean")])
def test_aliases_give_the_same_distances(data, alias, name):
    X, Y, _, _ = data
    assert_same_run_to_run(spira.pairwise_distances(X, Y, metric=alias),
                           spira.pairwise_distances(X, Y, metric=name))


def test_minkowski_p_is_used(data):
    X, Y, _, _ = data
    for p in (1.0, 1.5, 2.0, 4.0):
        got = spira.pairwise_distances(X, Y, metric="minkowski", p=p)
        np.testing.assert_allclose(got, oracle("minkowski", X, Y, p=p), rtol=1e-5, atol=1e-6)
