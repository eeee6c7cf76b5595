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
    with pytest.raises(ValueError, match="non-negative"):
        spira.kneighbors(Xn, n_neighbors=2, metric=metric)
    with pytest.raises(ValueError, match="non-negative"):
        spira.pairwise_distances(Xn, metric=metric)
    with pytest.raises(ValueError, match="non-negative"):
        spira.kneighbors(X, Xn, n_neighbors=2, metric=metric)


@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf])
def test_nan_and_infinity_are_rejected(value):
    Xn = X.toarray()
    Xn[2, 3] = value
    for a in (Xn, sp.csr_matrix(Xn)):
        with pytest.raises(ValueError, match="NaN|infinity"):
            spira.kneighbors(a, n_neighbors=2)


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
    with pytest.raises(MemoryError, match="memory_budget"):
        spira.kneighbors(X, n_neighbors=5, memory_budget=16)
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
