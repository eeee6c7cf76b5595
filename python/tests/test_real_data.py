"""Every metric on real data: slices of the datasets bundled in data/ (pbmc3k UMI counts, KOS word
counts) and, when ../shared/data is present, MovieLens ratings. pairwise_distances against SciPy's
cdist (the dense oracle of conftest.py), kneighbors against that oracle (tie-aware: integer counts
tie often) and against scikit-learn's NearestNeighbors(algorithm="brute") where it has the
metric."""

from pathlib import Path

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp
from conftest import BOOLEAN, METRICS, MINKOWSKI_P, assert_knn_matches, oracle
from sklearn.neighbors import VALID_METRICS, NearestNeighbors

import spira

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared" / "data"


def dense_slice(M, rows, cols):
    """float64 CSR of `rows` rows (evenly spaced) and the `cols` most often nonzero columns,
    without the rows left empty."""
    M = sp.csr_matrix(M, dtype=np.float64)
    M = M[np.linspace(0, M.shape[0] - 1, rows).astype(int)]
    popular = np.argsort(-np.diff(M.tocsc().indptr), kind="stable")[:cols]
    M = M[:, np.sort(popular)].tocsr()
    return M[np.diff(M.indptr) > 0]


def load(name):
    if name == "pbmc3k":
        return dense_slice(sp.load_npz(ROOT / "data" / "pbmc3k" / "counts.npz"), 170, 1500)
    if name == "kos":
        return dense_slice(scipy.io.mmread(ROOT / "data" / "uci-bow-kos" / "docword.kos.mtx.gz"),
                           170, 1500)
    path = SHARED / "movielens-latest-small" / "ratings.mtx.gz"
    if not path.exists():
        pytest.skip(f"{path} is absent (the shared datasets are not part of the repository)")
    return dense_slice(scipy.io.mmread(path), 170, 1500)


@pytest.fixture(scope="module", params=["pbmc3k", "kos", "movielens"])
def real(request):
    """(name, index, queries): 130 index rows and the remaining ~40 rows as queries."""
    M = load(request.param)
    return request.param, M[:130], M[130:]


def p_of(metric):
    return MINKOWSKI_P if metric == "minkowski" else 2


@pytest.mark.parametrize("metric", METRICS)
def test_pairwise_distances_on_real_data_equal_cdist(real, metric):
    name, X, Y = real
    got = spira.pairwise_distances(Y, X, metric=metric, p=p_of(metric), device="cpu")
    np.testing.assert_allclose(got, oracle(metric, Y, X), rtol=1e-6, atol=1e-8, err_msg=name)


@pytest.mark.parametrize("metric", METRICS)
def test_kneighbors_on_real_data_equal_brute_force(real, metric):
    name, X, Y = real
    largest = metric == "inner_product"
    k = 10
    d, i = spira.kneighbors(X, Y, n_neighbors=k, metric=metric, p=p_of(metric), device="cpu")
    assert_knn_matches(d, i, oracle(metric, Y, X), k, largest=largest, rtol=1e-5, atol=1e-6)
    # Without queries, each point left out.
    d, i = spira.kneighbors(X, n_neighbors=k, metric=metric, p=p_of(metric), exclude_self=True)
    assert_knn_matches(d, i, oracle(metric, X, X), k, largest=largest, rtol=1e-5, atol=1e-6,
                       exclude=np.arange(X.shape[0]))
    if metric in VALID_METRICS["brute"] and metric != "hamming":
        # scikit-learn's brute force: the same sorted distances (the indices may differ where
        # distances tie, which assert_knn_matches allowed above).
        x, y = (X.toarray() != 0, Y.toarray() != 0) if metric in BOOLEAN else (X.toarray(),
                                                                                 Y.toarray())
        kw = {"p": MINKOWSKI_P} if metric == "minkowski" else {}
        nn = NearestNeighbors(n_neighbors=k, algorithm="brute", metric=metric, **kw).fit(x)
        sk_d, _ = nn.kneighbors(y)
        d, _ = spira.kneighbors(X, Y, n_neighbors=k, metric=metric, p=p_of(metric))
        np.testing.assert_allclose(d, sk_d, rtol=1e-5, atol=1e-6, err_msg=name)
