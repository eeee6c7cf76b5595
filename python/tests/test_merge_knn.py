"""spira.merge_knn (the binding of spira::merge_knn, host backend) against a NumPy oracle: random
parts cut from one candidate matrix full of ties, -0.0 and NaN, in both directions, with padding
and parts of width 0; the merge of spira.kneighbors results of disjoint blocks against the whole
index; and the library's messages for parts that break the contract."""

import numpy as np
import pytest
from conftest import random_sparse

import spira


def order_key(values, largest):
    """The sort key of the k-NN order as a pair of arrays: NaN last, -0.0 equal to +0.0."""
    nan = np.isnan(values)
    v = np.where(nan, 0.0, values.astype(np.float64) + 0.0)  # -0.0 + 0.0 is +0.0
    return nan, (-v if largest else v)


def oracle(values, indices, k, largest):
    """The best k of each row of (values, indices) (padding: index -1), best first, then padded
    with index -1 and +inf (-inf largest)."""
    n = values.shape[0]
    out_v = np.full((n, k), -np.inf if largest else np.inf, dtype=np.float32)
    out_i = np.full((n, k), -1, dtype=np.int64)
    for r in range(n):
        real = indices[r] >= 0
        v, i = values[r][real], indices[r][real]
        nan, key = order_key(v, largest)
        order = np.lexsort((i, key, nan))[:k]
        out_v[r, : len(order)] = v[order]
        out_i[r, : len(order)] = i[order]
    return out_v, out_i


def assert_same(got, want):
    """Equal indices, and distances equal as bits (NaN and -0.0 exactly), padding included."""
    (d, i), (d0, i0) = got, want
    assert d.dtype == np.float32 and i.dtype == np.int64
    np.testing.assert_array_equal(i, i0)
    assert d.tobytes() == d0.tobytes()


@pytest.mark.parametrize("largest, metric", [(False, "euclidean"), (True, "inner_product")])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_random_parts_against_oracle(largest, metric, seed):
    rng = np.random.default_rng(seed)
    n_q, n_index = 40, 90
    # Few distinct values: ties everywhere; -0.0, +0.0 and NaN among them.
    choices = np.array([0.0, -0.0, 0.5, 1.0, 1.0, 2.0, np.nan, 3.0, 0.25], dtype=np.float32)
    values = rng.choice(choices, size=(n_q, n_index))
    # Disjoint blocks of the index in a random order, of random sizes (one of them empty).
    perm = rng.permutation(n_index)
    cuts = np.sort(rng.choice(np.arange(1, n_index), size=4, replace=False))
    blocks = np.split(perm, cuts) + [np.array([], dtype=np.int64)]
    for k in (1, 7, 31, 90, 100):
        parts = []
        for b in blocks:
            vals = values[:, b]
            idx = np.broadcast_to(b, vals.shape).astype(np.int64)
            # Some candidates missing (padding inside a part).
            idx = np.where(rng.random(idx.shape) < 0.1, -1, idx)
            width = int(rng.integers(0, k + 1)) if len(b) else 0
            parts.append(oracle(vals, idx, width, largest))  # sorted, padded with -1
        all_v = np.concatenate([p[0] for p in parts], axis=1)
        all_i = np.concatenate([p[1] for p in parts], axis=1)
        want = oracle(all_v, all_i, k, largest)
        got = spira.merge_knn(parts, k, metric=metric)
        assert_same(got, want)
        # Any order of the parts, and a tree of merges, give the same.
        assert_same(spira.merge_knn(parts[::-1], k, metric=metric), want)
        left = spira.merge_knn(parts[:2], k, metric=metric)
        right = spira.merge_knn(parts[2:], k, metric=metric)
        assert_same(spira.merge_knn([left, right], k, metric=metric), want)


def test_padding_when_fewer_candidates():
    d = np.array([[1.0, 2.0]], dtype=np.float32)
    i = np.array([[4, -1]], dtype=np.int64)
    got_d, got_i = spira.merge_knn([(d, i), (np.array([[0.5]]), np.array([[9]]))], 4)
    assert got_i.tolist() == [[9, 4, -1, -1]]
    assert got_d.tolist() == [[0.5, 1.0, np.inf, np.inf]]
    got_d, got_i = spira.merge_knn([(d, i)], 3, metric="inner_product")
    assert got_i.tolist() == [[4, -1, -1]] and got_d[0, 1:].tolist() == [-np.inf, -np.inf]


@pytest.mark.parametrize("metric", ["cosine", "inner_product", "manhattan"])
def test_merge_of_blocks_equals_whole_index(metric):
    X = random_sparse(120, 12, 0.4, 5)
    Q = random_sparse(30, 12, 0.4, 6)
    k = 9
    bounds = [0, 5, 50, 51, 120]
    parts = []
    for a, b in zip(bounds, bounds[1:]):
        d, i = spira.kneighbors(X[a:b], Q, n_neighbors=min(k, b - a), metric=metric)
        parts.append((d, i + a))
    got = spira.merge_knn(parts, k, metric=metric)
    want = spira.kneighbors(X, Q, n_neighbors=k, metric=metric)
    np.testing.assert_array_equal(got[1], want[1])
    assert got[0].tobytes() == want[0].tobytes()


def test_inputs_are_converted():
    # float64 distances are rounded to float32, other integer types widened; lists work.
    d, i = spira.merge_knn([([[0.1, 0.2]], np.array([[3, 1]], dtype=np.int32))], 2)
    assert d.dtype == np.float32 and i.dtype == np.int64
    assert i.tolist() == [[3, 1]] and d.tolist() == [[np.float32(0.1), np.float32(0.2)]]
    # Non-contiguous views are copied.
    big_d = np.array([[0.0, 9.0, 1.0, 9.0]], dtype=np.float32)
    big_i = np.array([[2, 9, 5, 9]])
    d, i = spira.merge_knn([(big_d[:, ::2], big_i[:, ::2])], 2)
    assert i.tolist() == [[2, 5]]


def one(d, i):
    return [(np.array(d, dtype=np.float32), np.array(i, dtype=np.int64))]


@pytest.mark.parametrize(
    "parts, k, message",
    [
        ([], 2, "merge_knn: no parts to merge"),
        (one([[1.0]], [[0]]), 0, "merge_knn: k = 0 must be >= 1"),
        (one([[1.0]], [[0]]) + one([[1.0], [2.0]], [[1], [2]]), 1,
         "merge_knn: part 1 has 2 rows but part 0 has 1"),
        ([(np.ones((1, 2), np.float32), np.ones((1, 3), np.int64))], 1,
         "merge_knn: part 0 has indices of 1 x 3 but distances of 1 x 2"),
        (one([[1.0, 2.0]], [[0, -2]]), 2,
         r"merge_knn: part 0, row 0, column 1: index -2 is invalid"),
        (one([[1.0, 2.0]], [[-1, 3]]), 2,
         r"merge_knn: part 0, row 0: index 3 at column 1 follows padding"),
        (one([[2.0, 1.0]], [[0, 1]]), 2, r"merge_knn: part 0, row 0 is not sorted best first"),
        (one([[1.0, 2.0]], [[4, 4]]), 2, "merge_knn: row 0 lists index 4 twice in part 0"),
        (one([[1.0]], [[7]]) + one([[2.0]], [[7]]), 2,
         "merge_knn: row 0 lists index 7 in parts 0 and 1; the index blocks must be disjoint"),
    ],
)
def test_contract_violations_raise_the_library_message(parts, k, message):
    with pytest.raises(ValueError, match=message):
        spira.merge_knn(parts, k)


def test_sorted_in_the_metric_direction():
    part = one([[1.0, 2.0]], [[0, 1]])
    spira.merge_knn(part, 2, metric="cosine")
    with pytest.raises(ValueError, match="not sorted best first .largest"):
        spira.merge_knn(part, 2, metric="inner_product")


@pytest.mark.parametrize(
    "parts, k, error, message",
    [
        ("abc", 1, TypeError, "parts must be a sequence"),
        ([5], 1, TypeError, r"parts\[0\] must be a \(distances, indices\) pair"),
        ([np.ones((3, 2))], 1, TypeError, r"parts\[0\] must be a \(distances, indices\) pair"),
        ([(np.ones((1, 1)), np.ones((1, 1)))], 1, TypeError, "indices must be integers"),
        ([(np.array([["a"]]), np.ones((1, 1), int))], 1, TypeError, "must be floating point"),
        ([(np.ones(2), np.ones(2, int))], 1, ValueError, "must be 2-D"),
        (one([[1.0]], [[0]]), 1.5, TypeError, "n_neighbors must be an integer"),
    ],
)
def test_python_argument_errors(parts, k, error, message):
    with pytest.raises(error, match=message):
        spira.merge_knn(parts, k)


def test_unknown_metric():
    with pytest.raises(ValueError, match="unknown metric"):
        spira.merge_knn(one([[1.0]], [[0]]), 1, metric="cosinus")


def test_docstring_examples():
    import doctest

    import spira._merge

    assert doctest.testmod(spira._merge).failed == 0
