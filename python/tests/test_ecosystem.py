"""spira in the tools its users run: scanpy's pp.neighbors with spira's KNeighborsTransformer and
UMAP's precomputed_knn, on the pbmc3k cells bundled in data/, against the same tools fed with
scikit-learn's exact brute force. Skipped with a reason when scanpy or umap-learn is missing."""

import warnings
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.neighbors import NearestNeighbors

from spira.neighbors import KNeighborsTransformer, umap_knn

DATA = Path(__file__).resolve().parents[2] / "data" / "pbmc3k"


@pytest.fixture(scope="module")
def cells():
    """600 pbmc3k cells (every 4th), log-normalised counts (sparse), and their cell types.

    float64: in float32 (scanpy's default) spira and scikit-learn round differently, and a few
    neighbours that tie within float32 rounding swap places; in float64 the lists are equal."""
    counts = sp.load_npz(DATA / "counts.npz")[::4].astype(np.float64).tocsr()
    labels = [line.split("\t")[1] for line in (DATA / "cells.tsv").read_text().splitlines()[1:]]
    X = counts.multiply(1e4 / counts.sum(axis=1)).tocsr()
    X.data = np.log1p(X.data)
    return X[:600], np.array(labels[::4][:600])


def without_diagonal(D):
    D = sp.csr_matrix(D, copy=True)
    D.setdiag(0)
    D.eliminate_zeros()
    D.sort_indices()
    return D


@pytest.mark.parametrize("use_rep", ["X", "X_pca"])
def test_scanpy_neighbors_with_spira_equals_its_exact_search(cells, use_rep):
    # Two oracles. scanpy given scikit-learn's own KNeighborsTransformer (brute force) in the same
    # place, which scanpy treats as it treats spira's (distances: n_neighbors entries besides the
    # cell): the same distances. scanpy's built-in exact search (transformer="sklearn"): the same
    # connectivities. (scikit-learn's transformer leaves each cell ~1e-8 from itself by rounding;
    # UMAP's connectivities read that as the nearest distance, so they differ from both. spira,
    # like scanpy's built-in search, puts each cell at exactly 0.)
    sc = pytest.importorskip("scanpy", reason="scanpy is not installed")
    import anndata
    from sklearn.neighbors import KNeighborsTransformer as SkTransformer

    X, labels = cells
    metric = "cosine" if use_rep == "X" else "euclidean"
    transformers = {
        "spira": KNeighborsTransformer(n_neighbors=15, metric=metric),
        "sklearn": SkTransformer(n_neighbors=15, metric=metric, algorithm="brute"),
        "scanpy": "sklearn",
    }
    graphs = {}
    for who, transformer in transformers.items():
        adata = anndata.AnnData(X.copy())
        adata.obs["cell_type"] = labels
        if use_rep == "X_pca":  # dense, euclidean: what most users do
            sc.pp.pca(adata, n_comps=30, random_state=0, dtype="float64")
        sc.pp.neighbors(adata, n_neighbors=15, use_rep=use_rep, metric=metric,
                        transformer=transformer)
        graphs[who] = adata.obsp["distances"], adata.obsp["connectivities"]
    (d_ours, c_ours), d_theirs = graphs["spira"], graphs["sklearn"][0]
    d_ours, d_theirs = without_diagonal(d_ours), without_diagonal(d_theirs)
    np.testing.assert_array_equal(d_ours.indptr, d_theirs.indptr)
    np.testing.assert_array_equal(d_ours.indices, d_theirs.indices)
    np.testing.assert_allclose(d_ours.data, d_theirs.data, rtol=1e-6, atol=1e-7)
    assert (np.diff(d_ours.indptr) == 15).all()
    c_scanpy = graphs["scanpy"][1]
    assert c_ours.nnz == c_scanpy.nnz and abs(c_ours - c_scanpy).max() < 1e-6


def test_umap_with_spira_knn_builds_the_graph_of_the_exact_neighbours(cells):
    umap = pytest.importorskip("umap", reason="umap-learn is not installed")
    X, _ = cells
    k = 15
    indices, distances = umap_knn(X, k, metric="cosine")
    # The exact neighbours by scikit-learn's brute force, in the same layout (each point first).
    nn = NearestNeighbors(n_neighbors=k, algorithm="brute", metric="cosine").fit(X)
    sk_distances, sk_indices = nn.kneighbors(X)
    # Each point is exactly 0 from itself; scikit-learn's rounding leaves ~1e-8, which UMAP would
    # take for the distance to the nearest neighbour.
    assert (sk_distances[:, 0] < 1e-6).all()
    sk_distances[:, 0] = 0
    assert (indices[:, 0] == np.arange(X.shape[0])).all()
    assert (distances[:, 0] == 0).all()
    np.testing.assert_array_equal(indices, sk_indices)
    np.testing.assert_allclose(distances, sk_distances, rtol=1e-4, atol=1e-5)

    def fit(knn):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            reducer = umap.UMAP(n_neighbors=k, metric="cosine", random_state=0, n_epochs=30,
                                precomputed_knn=knn)
            return reducer, reducer.fit_transform(X)

    ours, embedding = fit((indices, distances, None))
    theirs, _ = fit((sk_indices, sk_distances.astype(np.float32), None))
    assert embedding.shape == (X.shape[0], 2) and np.isfinite(embedding).all()
    # The fuzzy graph UMAP builds from spira's lists is the one it builds from the brute force.
    diff = abs(ours.graph_ - theirs.graph_)
    assert diff.max() < 1e-4 and ours.graph_.nnz == theirs.graph_.nnz


def test_umap_precomputed_knn_without_self_is_a_different_graph(cells):
    # Why umap_knn lists each point first: the same lists without the point give UMAP another
    # graph, silently (the documented pitfall).
    umap = pytest.importorskip("umap", reason="umap-learn is not installed")
    X, _ = cells
    indices, distances = umap_knn(X, 16, metric="cosine")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        graphs = [
            umap.UMAP(n_neighbors=15, metric="cosine", random_state=0, n_epochs=10,
                      precomputed_knn=(i, d, None)).fit(X).graph_
            for i, d in ((indices[:, :15], distances[:, :15]),
                         (indices[:, 1:], distances[:, 1:]))
        ]
    assert abs(graphs[0] - graphs[1]).max() > 0.1
