"""spira.select_k against a NumPy oracle of its documented order: the k best values of each row,
ties to the smaller index, NaN worst in both directions, -0.0 equal to +0.0; sparse rows count
their stored values only and are padded with index -1 and -inf / +inf."""

import math

import numpy as np
import pytest
import scipy.sparse as sp

import spira


def oracle_row(values, columns, k, largest, sorted_):
    def key(t):
        v, c = t
        if math.isnan(v):
            return (1, 0.0, c)
        return (0, -v if largest else v, c)

    best = sorted(zip(values.tolist(), columns.tolist()), key=key)[:k]
    if not sorted_:
        best = sorted(best, key=lambda t: t[1])
    pad = -math.inf if largest else math.inf
    best += [(pad, -1)] * (k - len(best))
    return [v for v, _ in best], [c for _, c in best]


def check(values, indices, expected):
    want_v, want_i = expected
    assert indices.tolist() == want_i
    np.testing.assert_array_equal(values, np.array(want_v, dtype=values.dtype))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("largest", [True, False])
@pytest.mark.parametrize("sorted_", [True, False])
def test_dense_rows_equal_the_oracle(dtype, largest, sorted_):
    rng = np.random.default_rng(3)
    A = rng.integers(-4, 5, size=(40, 300)).astype(dtype)  # many ties
    A[3, ::7] = np.nan
    A[5, :] = np.nan
    A[7, 10] = -0.0
    for k in (1, 8, 300):
        values, indices = spira.select_k(A, k, largest=largest, sorted=sorted_)
        assert values.dtype == dtype and indices.dtype == np.int64
        assert values.shape == indices.shape == (40, k)
        for r in range(A.shape[0]):
            check(values[r], indices[r],
                  oracle_row(A[r], np.arange(A.shape[1]), k, largest, sorted_))


def test_one_dimensional_input_gives_one_dimensional_output():
    values, indices = spira.select_k([3, 1, 4, 1, 5, 9, 2, 6], 3)
    assert values.tolist() == [9.0, 6.0, 5.0] and indices.tolist() == [5, 7, 4]
    assert values.dtype == np.float64


@pytest.mark.parametrize("fmt", ["csr", "csc", "coo"])
@pytest.mark.parametrize("largest", [True, False])
def test_sparse_rows_use_stored_values_and_pad(fmt, largest):
    rng = np.random.default_rng(4)
    dense = rng.integers(-3, 4, size=(30, 50)).astype(np.float32)
    dense[rng.random(dense.shape) < 0.8] = 0
    dense[2, :] = 0  # an empty row: all padding
    A = sp.csr_matrix(dense).asformat(fmt)
    csr = sp.csr_matrix(A)
    for k in (1, 4, 20):
        values, indices = spira.select_k(A, k, largest=largest)
        assert values.dtype == np.float32 and indices.dtype == np.int64
        for r in range(30):
            lo, hi = csr.indptr[r], csr.indptr[r + 1]
            check(values[r], indices[r],
                  oracle_row(csr.data[lo:hi], csr.indices[lo:hi], k, largest, True))


def test_input_is_not_modified():
    A = np.array([[2.0, 7.0, 1.0]])
    before = A.copy()
    spira.select_k(A, 2)
    np.testing.assert_array_equal(A, before)


def test_bad_arguments():
    with pytest.raises(ValueError, match="k = 4"):
        spira.select_k(np.zeros((2, 3)), 4)
    with pytest.raises(ValueError, match="k = 0"):
        spira.select_k(sp.csr_matrix(np.eye(3)), 0)
    with pytest.raises(TypeError):
        spira.select_k("abc", 1)
    with pytest.raises(TypeError):
        spira.select_k(np.zeros((2, 3)), 1.5)
    with pytest.raises(ValueError):
        spira.select_k(np.zeros((2, 3, 4)), 1)
