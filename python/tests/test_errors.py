"""Errors: bad input raises the Python exception of the fitting kind (with the library's message
where the library detects it) and never crashes the interpreter."""

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import random_sparse

import spira
from spira import _core

X = random_sparse(20, 6, 0.5, 31)


def test_unknown_metric_is_a_value_error_listing_the_names():
    with pytest.raises(ValueError, match="unknown metric 'cosinus'.*valid metrics are"):
        spira.kneighbors(X, n_neighbors=2, metric="cosinus")
    with pytest.raises(ValueError, match="unknown metric"):
        spira.pairwise_distances(X, metric="Euclidean")  # names are case-sensitive


@pytest.mark.parametrize("metric", [len, None, 3])
def test_metric_must_be_a_string(metric):
    with pytest.raises(TypeError, match="metric"):
        spira.pairwise_distances(X, metric=metric)


@pytest.mark.parametrize("k", [0, -1, 21])
def test_n_neighbors_out_of_range(k):
    with pytest.raises(ValueError, match="n_neighbors"):
        spira.kneighbors(X, n_neighbors=k)


def test_n_neighbors_counts_the_excluded_point():
    spira.kneighbors(X, n_neighbors=19, exclude_self=True)
    with pytest.raises(ValueError, match="n_neighbors <= 19"):
        spira.kneighbors(X, n_neighbors=20, exclude_self=True)
    with pytest.raises(ValueError, match="n_neighbors <= 19"):
        spira.kneighbors_graph(X, 20)


@pytest.mark.parametrize("k", [2.0, "3", True, None])
def test_n_neighbors_must_be_an_integer(k):
    with pytest.raises(TypeError, match="n_neighbors"):
        spira.kneighbors(X, n_neighbors=k)


@pytest.mark.parametrize("bad", [np.zeros(5), np.zeros((2, 3, 4)), np.float64(1.0)])
def test_arrays_must_be_2d(bad):
    with pytest.raises(ValueError, match="2-D"):
        spira.pairwise_distances(bad)


@pytest.mark.parametrize(
    "bad",
    ["abc", np.array([["a", "b"]]), np.array([[1, None]], dtype=object),
     np.array([[1 + 2j, 0]]), [[1, "x"]], {"a": 1}],
)
def test_non_numeric_input_is_a_type_error(bad):
    with pytest.raises(TypeError):
        spira.pairwise_distances(bad)


def test_ragged_lists_are_rejected():
    with pytest.raises((TypeError, ValueError)):
        spira.pairwise_distances([[1.0, 2.0], [3.0]])


def test_columns_must_agree():
    Y = random_sparse(4, 7, 0.5, 32)
    with pytest.raises(ValueError, match="6 features .* 7"):
        spira.kneighbors(X, Y, n_neighbors=2)
    with pytest.raises(ValueError, match="columns|features"):
        spira.pairwise_distances(X, Y)


@pytest.mark.parametrize("metric", ["jensenshannon", "hellinger", "kl_divergence"])
def test_negative_values_for_distribution_metrics(metric):
    Xn = X.copy()
    Xn.data[3] = -0.5
    # The messages name the argument as the caller passed it (X, Y), not the core's operands.
    with pytest.raises(ValueError, match="non-negative values, but X has -0.5"):
        spira.kneighbors(Xn, n_neighbors=2, metric=metric)
    with pytest.raises(ValueError, match="non-negative values, but X has -0.5"):
        spira.pairwise_distances(Xn, metric=metric)
    with pytest.raises(ValueError, match="non-negative values, but Y has -0.5"):
        spira.kneighbors(X, Xn, n_neighbors=2, metric=metric)
    with pytest.raises(ValueError, match="non-negative values, but Y has -0.5"):
        spira.pairwise_distances(X, Xn, metric=metric)


@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf])
def test_nan_and_infinity_are_rejected(value):
    Xn = X.toarray()
    Xn[2, 3] = value
    for a in (Xn, sp.csr_matrix(Xn)):
        with pytest.raises(ValueError, match="NaN" if np.isnan(value) else "infinity"):
            spira.kneighbors(a, n_neighbors=2)


def test_large_finite_values_are_accepted():
    # Their squares overflow float32 (and float64 for the second): still finite input.
    for dtype, big in ((np.float32, 3e30), (np.float64, 1e200)):
        Xb = X.toarray().astype(dtype)
        Xb[2, 3] = big
        Xb[4, 1] = -big
        d, i = spira.kneighbors(sp.csr_matrix(Xb), n_neighbors=2, metric="cosine", device="cpu")
        assert i.shape == (X.shape[0], 2)
    Xb[5, 5] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        spira.kneighbors(Xb, n_neighbors=2, device="cpu")


def test_minkowski_p_below_one_is_a_value_error():
    with pytest.raises(ValueError, match="p"):
        spira.pairwise_distances(X, metric="minkowski", p=0.5)
    with pytest.raises(ValueError, match="p"):
        spira.kneighbors(X, n_neighbors=2, metric="minkowski", p=0.5)


def test_exclude_self_with_queries():
    with pytest.raises(ValueError, match="exclude_self"):
        spira.kneighbors(X, X, n_neighbors=2, exclude_self=True)


def test_device_names():
    with pytest.raises(ValueError, match="device"):
        spira.kneighbors(X, n_neighbors=2, device="gpu")
    spira.kneighbors(X, n_neighbors=2, device="cpu")


@pytest.mark.skipif(_core.cuda_compiled() and _core.cuda_device_count() > 0,
                    reason="a CUDA device is available")
def test_cuda_unavailable_is_a_runtime_error():
    with pytest.raises(RuntimeError, match="device='cuda'"):
        spira.kneighbors(X, n_neighbors=2, device="cuda")
    with pytest.raises(RuntimeError, match="device='cuda'"):
        spira.pairwise_distances(X, device="cuda")


def test_a_budget_too_small_is_a_memory_error():
    with pytest.raises(MemoryError, match="memory_budget") as caught:
        spira.kneighbors(X, n_neighbors=5, memory_budget=16)
    assert "knn_params" not in str(caught.value)  # the Python argument, not the C++ field
    with pytest.raises(ValueError, match="memory_budget"):
        spira.kneighbors(X, n_neighbors=5, memory_budget=0)
    with pytest.raises(TypeError, match="memory_budget"):
        spira.kneighbors(X, n_neighbors=5, memory_budget=1.5)
    d, _ = spira.kneighbors(X, n_neighbors=5, memory_budget=1 << 20)
    assert d.shape == (20, 5)


def test_library_validation_reaches_python_as_value_error():
    # The core validates what it is given: a non-canonical CSR handed to it directly (bypassing
    # the package's canonicalisation) is a ValueError with the library's message.
    indptr = np.array([0, 2], dtype=np.int64)
    bad = (1, 3, indptr, np.array([2, 1], dtype=np.int32), np.array([1.0, 2.0]))
    with pytest.raises(ValueError, match="X"):
        _core.kneighbors(bad, None, 1, "euclidean", 2.0, False, False, 0)
    out_of_bounds = (1, 3, indptr, np.array([0, 7], dtype=np.int32), np.array([1.0, 2.0]))
    with pytest.raises(ValueError):
        _core.pairwise_distances(out_of_bounds, out_of_bounds, np.empty((1, 1)), "euclidean",
                                 2.0, False, 0)
    short = (1, 3, indptr, np.array([0], dtype=np.int32), np.array([1.0]))
    with pytest.raises(ValueError, match="row pointers end at 2"):
        _core.kneighbors(short, None, 1, "euclidean", 2.0, False, False, 0)


def test_show_config_prints_version_backends_and_gpu(capsys):
    spira.show_config()
    text = capsys.readouterr().out
    assert f"spira {spira.__version__}" in text
    assert "backends: host" in text
    assert "gpu: " in text


def test_library_messages_reach_python_unchanged():
    # The library's own text, word for word, under the matching Python exception; through the
    # package's functions, with the arguments named as the Python call names them.
    with pytest.raises(ValueError) as e:
        _core.kneighbors(spira._input.as_csr(X), None, 21, "euclidean", 2.0, False, False, 0)
    assert str(e.value) == "knn_graph: k = 21 must be in [1, 20] (the index has 20 rows)"
    with pytest.raises(MemoryError) as e:
        spira.kneighbors(X, n_neighbors=5, memory_budget=16)
    assert str(e.value) == ("knn_graph: memory budget of 16 bytes cannot hold the top-5 lists of "
                            "one query (240 bytes); raise memory_budget")
    Xn = X.copy()
    Xn.data[0] = -0.25
    row, col = Xn.nonzero()[0][0], Xn.indices[0]
    with pytest.raises(ValueError) as e:
        spira.kneighbors(Xn, n_neighbors=2, metric="hellinger")
    assert str(e.value) == (f"knn_graph: metric hellinger requires non-negative values, but "
                            f"X has -0.25 at row {row}, column {col}")


@pytest.mark.skipif(_core.cuda_compiled(), reason="the CUDA backend is compiled in")
def test_not_compiled_is_a_runtime_error_with_the_library_message():
    # Bypassing the package's device check: the library's CUDA entry points throw not_compiled.
    with pytest.raises(RuntimeError, match="compiled without CUDA"):
        _core.kneighbors(spira._input.as_csr(X), None, 2, "euclidean", 2.0, False, True, 0)


GOOD = (4, 3, np.array([0, 1, 2, 3, 3], dtype=np.int64), np.array([0, 1, 2], dtype=np.int32),
        np.array([1.0, 2.0, 3.0]))


@pytest.mark.parametrize("bad", [
    (4, 3, np.array([0, 2, 1, 3, 3], dtype=np.int64), GOOD[3], GOOD[4]),   # decreasing
    (4, 3, np.array([1, 1, 2, 3, 4], dtype=np.int64), GOOD[3], GOOD[4]),   # does not start at 0
    (4, 3, GOOD[2], np.array([0, -1, 2], dtype=np.int32), GOOD[4]),         # negative column
    (4, 3, GOOD[2], np.array([0, 1, 3], dtype=np.int32), GOOD[4]),          # column == cols
    (4, 3, GOOD[2].astype(np.int32), GOOD[3], GOOD[4]),                     # int32 row pointers
    (4, 3, GOOD[2], GOOD[3].astype(np.int16), GOOD[4]),                     # int16 columns
    (4, 3, GOOD[2], GOOD[3], GOOD[4].astype(np.float16)),                   # float16 values
    (4, 3, GOOD[2][:4], GOOD[3], GOOD[4]),                                  # short row pointers
    (-1, 3, GOOD[2], GOOD[3], GOOD[4]),                                     # negative shape
    (4, 3, GOOD[2], GOOD[3]),                                               # 4-tuple
])
def test_malformed_arrays_given_to_the_core_raise(bad):
    # The package never builds these; the core still refuses them instead of reading out of
    # bounds.
    with pytest.raises((ValueError, TypeError)):
        _core.kneighbors(bad, None, 1, "euclidean", 2.0, False, False, 0)
    with pytest.raises((ValueError, TypeError)):
        _core.pairwise_distances(GOOD, bad, np.empty((4, 4)), "euclidean", 2.0, False, 0)


def test_pairwise_output_array_is_checked():
    with pytest.raises(ValueError, match="out"):
        _core.pairwise_distances(GOOD, GOOD, np.empty((4, 3)), "euclidean", 2.0, False, 0)
    with pytest.raises(ValueError, match="out"):
        _core.pairwise_distances(GOOD, GOOD, np.empty((4, 4), np.float32), "euclidean", 2.0,
                                 False, 0)
    with pytest.raises(TypeError):  # not C-contiguous: a copy would be written, not `out`
        _core.pairwise_distances(GOOD, GOOD, np.empty((4, 8))[:, ::2], "euclidean", 2.0, False,
                                 0)
    with pytest.raises(TypeError):
        _core.select_k_dense(np.ones((2, 3)), 1, True, True, np.empty((2, 2))[:, ::2],
                             np.empty((2, 1), np.int64), False)


BAD_INPUTS = {
    "a string": "points",
    "strings": np.array([["a", "b"], ["c", "d"]]),
    "NaN": np.array([[0.0, np.nan], [1.0, 2.0]]),
    "infinity": sp.csr_matrix(np.array([[0.0, np.inf], [1.0, 2.0]])),
    "1-D": np.arange(4.0),
    "3-D": np.zeros((2, 2, 2)),
    "objects": np.array([[object(), 1]], dtype=object),
    "complex": np.ones((2, 2), dtype=complex),
}


@pytest.mark.parametrize("what", sorted(BAD_INPUTS))
def test_bad_input_to_every_function_raises_never_crashes(what):
    from spira.neighbors import KNeighborsTransformer, opentsne_knn, umap_knn

    bad = BAD_INPUTS[what]
    calls = [
        lambda: spira.kneighbors(bad, n_neighbors=1),
        lambda: spira.kneighbors(np.eye(2), bad, n_neighbors=1),
        lambda: spira.kneighbors_graph(bad, 1),
        lambda: spira.pairwise_distances(bad),
        lambda: spira.pairwise_distances(np.eye(2), bad),
        lambda: umap_knn(bad, 1),
        lambda: opentsne_knn(bad, 1),
        lambda: KNeighborsTransformer(n_neighbors=1).fit_transform(bad),
    ]
    for call in calls:
        with pytest.raises((ValueError, TypeError)):
            call()


@pytest.mark.parametrize("metric", ["jensenshannon", "hellinger", "kl_divergence"])
def test_negative_values_are_refused_by_every_function(metric):
    from spira.neighbors import KNeighborsTransformer

    Xn = -X.toarray()
    for call in (lambda: spira.kneighbors_graph(Xn, 2, metric=metric),
                 lambda: KNeighborsTransformer(metric=metric).fit_transform(Xn)):
        with pytest.raises(ValueError, match="non-negative"):
            call()


def test_an_index_without_rows_is_named():
    empty = sp.csr_matrix((0, 6))
    with pytest.raises(ValueError, match="X has no samples"):
        spira.kneighbors(empty, n_neighbors=1)
    with pytest.raises(ValueError, match="X has no samples"):
        spira.kneighbors(empty, X[:, :6], n_neighbors=1)
