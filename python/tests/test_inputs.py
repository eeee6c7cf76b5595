"""Input types: every sparse format (matrices and arrays), int32 and int64 indices, float32 and
float64 values, dense arrays and lists give the same results; unsorted and duplicate indices are
canonicalised on a copy; inputs are never modified."""

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import assert_same_run_to_run, random_sparse

import spira


@pytest.fixture(scope="module")
def base():
    X = random_sparse(40, 12, 0.35, 21)
    Y = random_sparse(15, 12, 0.35, 22)
    d, i = spira.kneighbors(X, Y, n_neighbors=5, metric="manhattan")
    D = spira.pairwise_distances(X, Y, metric="manhattan")
    return X, Y, d, i, D


def variants(M):
    """The same matrix as every input type spira accepts."""
    out = {}
    for fmt in ("csr", "csc", "coo"):
        out[f"{fmt}_matrix"] = M.asformat(fmt)
        out[f"{fmt}_array"] = getattr(sp, f"{fmt}_array")(M)
    out["lil"] = M.tolil()
    out["dense"] = M.toarray()
    out["dense_fortran"] = np.asfortranarray(M.toarray())
    out["list"] = M.toarray().tolist()
    out["matrix"] = M.todense()
    m64 = M.copy()
    m64.indices = m64.indices.astype(np.int64)
    m64.indptr = m64.indptr.astype(np.int64)
    out["csr_int64"] = m64
    out["csr_float32"] = M.astype(np.float32)
    return out


@pytest.mark.parametrize("kind", list(variants(random_sparse(3, 3, 0.5, 0))))
def test_every_input_type_gives_the_same_result(base, kind):
    X, Y, d, i, D = base
    Xv, Yv = variants(X)[kind], variants(Y)[kind]
    got_d, got_i = spira.kneighbors(Xv, Yv, n_neighbors=5, metric="manhattan")
    tol = 1e-5 if kind == "csr_float32" else 0
    if tol:
        np.testing.assert_allclose(got_d, d, rtol=tol)
    else:
        assert_same_run_to_run(got_d, d)
    np.testing.assert_array_equal(got_i, i)
    got_D = spira.pairwise_distances(Xv, Yv, metric="manhattan")
    assert got_D.dtype == (np.float32 if kind == "csr_float32" else np.float64)
    if tol:
        np.testing.assert_allclose(got_D, D, rtol=1e-5)
    else:
        assert_same_run_to_run(got_D, D)


def test_mixed_types_compute_in_the_wider_type(base):
    X, Y, d, i, D = base
    x32 = X.astype(np.float32)
    y64 = Y.copy()
    y64.indices = y64.indices.astype(np.int64)
    got = spira.pairwise_distances(x32, y64, metric="manhattan")
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, D, rtol=1e-6)


def test_integer_and_boolean_input_become_float64(base):
    X = np.array([[0, 1, 2], [3, 0, 1], [1, 1, 1]])
    for a in (X, X.astype(np.int32), X.astype(bool), sp.csr_matrix(X)):
        got = spira.pairwise_distances(a, metric="euclidean")
        assert got.dtype == np.float64
        want = np.asarray(a.toarray() if sp.issparse(a) else a, dtype=np.float64)
        ref = np.sqrt(((want[:, None, :] - want[None, :, :]) ** 2).sum(-1))
        np.testing.assert_allclose(got, ref, atol=1e-12)


def unsorted_with_duplicates():
    """A CSR whose rows list columns out of order and twice: [[1, 0, 5], [0, 2, 0]]."""
    indptr = np.array([0, 3, 5], dtype=np.int32)
    indices = np.array([2, 0, 2], dtype=np.int32)  # row 0: column 2 twice, column 0
    data = np.array([2.0, 1.0, 3.0])
    indices = np.concatenate([indices, np.array([1, 1], dtype=np.int32)])
    data = np.concatenate([data, np.array([1.5, 0.5])])
    return sp.csr_matrix((data, indices, indptr), shape=(2, 3))


def test_unsorted_and_duplicate_indices_are_canonicalised_on_a_copy():
    M = unsorted_with_duplicates()
    before = (M.indptr.copy(), M.indices.copy(), M.data.copy())
    got = spira.pairwise_distances(M, metric="manhattan")
    want = np.array([[1.0, 0, 5], [0, 2, 0]])
    np.testing.assert_allclose(got, [[0, 8], [8, 0]])
    np.testing.assert_allclose(spira.pairwise_distances(want, metric="manhattan"), got)
    for a, b in zip(before, (M.indptr, M.indices, M.data)):
        np.testing.assert_array_equal(a, b)


def arrays_of(m):
    """The arrays that hold m's data."""
    if not sp.issparse(m):
        return [m]
    if m.format == "coo":
        return [m.data, m.row, m.col]
    return [m.data, m.indices, m.indptr]


def test_inputs_are_not_modified(base):
    X, Y, *_ = base
    f32 = X.astype(np.float32)
    f32.indices = f32.indices.astype(np.int64)
    inputs = [X, Y.tocoo(), X.tocsc(), X.toarray(), unsorted_with_duplicates(), f32,
              np.asfortranarray(Y.toarray().astype(np.float32))]
    snapshots = [[a.copy() for a in arrays_of(m)] for m in inputs]
    formats = [m.format if sp.issparse(m) else None for m in inputs]
    for m in inputs:
        spira.kneighbors(m, n_neighbors=2, metric="cosine")
        spira.kneighbors_graph(m, 1, mode="distance")
        spira.pairwise_distances(m, metric="euclidean")
        if m.shape[1] == X.shape[1]:  # as the queries or Y
            spira.kneighbors(X, m, n_neighbors=2, metric="cosine")
            spira.pairwise_distances(X, m, metric="euclidean")
    for m, snap, fmt in zip(inputs, snapshots, formats):
        assert (m.format if sp.issparse(m) else None) == fmt
        for a, b in zip(snap, arrays_of(m)):
            assert a.dtype == b.dtype
            np.testing.assert_array_equal(a, b)


def test_read_only_arrays_are_accepted(base):
    X, Y, d, i, _ = base
    for a in (X.data, X.indices, X.indptr):
        a.flags.writeable = False
    try:
        got_d, got_i = spira.kneighbors(X, Y, n_neighbors=5, metric="manhattan")
        np.testing.assert_array_equal(got_i, i)
    finally:
        for a in (X.data, X.indices, X.indptr):
            a.flags.writeable = True


def test_empty_queries_and_explicit_zeros():
    X = sp.csr_matrix(np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]))
    Q = sp.csr_matrix((0, 2))
    d, i = spira.kneighbors(X, Q, n_neighbors=2)
    assert d.shape == (0, 2) and i.shape == (0, 2)
    Z = sp.csr_matrix((np.array([0.0, 1.0]), np.array([0, 1]), np.array([0, 1, 2])), shape=(2, 2))
    # An explicitly stored 0 is the value 0.
    np.testing.assert_allclose(spira.pairwise_distances(Z, metric="jaccard"),
                               spira.pairwise_distances(Z.toarray(), metric="jaccard"))
