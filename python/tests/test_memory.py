"""No memory growth over 1,000 calls: the malloc heap (the library's buffers, NumPy's arrays, the
results handed to Python) and Python's own allocations (tracemalloc) stay flat, on the success
and on the error paths."""

import gc
import tracemalloc

import numpy as np
import pytest
from conftest import heap_bytes, random_sparse

import spira
from spira.neighbors import KNeighborsTransformer, opentsne_knn, umap_knn

X = random_sparse(200, 30, 0.2, 11)
Q = random_sparse(20, 30, 0.2, 12)
D = np.random.default_rng(13).random((50, 40))


def raises_value_error():
    with pytest.raises(ValueError):
        spira.kneighbors(X, n_neighbors=500)


def raises_memory_error():
    with pytest.raises(MemoryError):
        spira.kneighbors(X, n_neighbors=10, memory_budget=64)


CALLS = [
    lambda: spira.kneighbors(X, n_neighbors=10, metric="cosine"),
    lambda: spira.kneighbors(X, Q, n_neighbors=5, metric="manhattan"),
    lambda: spira.kneighbors(D, n_neighbors=3, exclude_self=True),
    lambda: spira.kneighbors_graph(X, 5, mode="distance"),
    lambda: spira.pairwise_distances(Q, X, metric="jensenshannon"),
    lambda: spira.select_k(X, 3),
    lambda: spira.select_k(D, 4, largest=False),
    lambda: KNeighborsTransformer(n_neighbors=5).fit_transform(X),
    lambda: umap_knn(X, 8),
    lambda: opentsne_knn(X, 8),
    raises_value_error,
    raises_memory_error,
]


def run(n):
    for i in range(n):
        CALLS[i % len(CALLS)]()
    gc.collect()


@pytest.mark.skipif(heap_bytes() is None, reason="no way to read the heap's size here")
def test_the_heap_does_not_grow_over_1000_calls():
    run(120)  # warm-up: allocator pools, scikit-learn's and SciPy's caches
    before = heap_bytes()
    run(1000)
    growth = heap_bytes() - before
    # One leaked result of the smallest call (20 x 5 x 12 bytes) per call would be 120 kB; the
    # larger ones leak far more. (Measured without tracemalloc, whose own tables grow.)
    assert growth < 64 << 10, f"the heap grew by {growth} bytes over 1,000 calls"


def test_python_allocations_do_not_grow_over_1000_calls():
    run(120)
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        run(1000)
        growth = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert growth < 64 << 10, f"Python's allocations grew by {growth} bytes over 1,000 calls"
