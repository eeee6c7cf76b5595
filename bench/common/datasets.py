"""The shared datasets as the benchmarks read them (one list, one loader).

Each entry of DATASETS is (label, file under the data folder, transpose): transpose means the
file's columns are the samples (pbmc3k stores genes x cells). load_csr returns the matrix the C++
side reads: float32 CSR with duplicates summed and columns sorted.
"""
import numpy as np
import scipy.io
import scipy.sparse as sp

DATASETS = [
    ("uci-bow-kos", "uci-bow-kos/docword.kos.mtx.gz", False),
    ("movielens-latest-small", "movielens-latest-small/ratings.mtx.gz", False),
    ("pbmc3k-cells", "pbmc3k/matrix.mtx.gz", True),
    ("20newsgroups", "20newsgroups/tfidf.mtx.gz", False),
    ("sec-edgar-names", "sec-edgar-names/char3gram_tfidf.mtx.gz", False),
    ("snap-email-enron", "snap-email-enron/email-Enron.txt.gz", False),
    ("suitesparse-1138_bus", "suitesparse-1138_bus/1138_bus.mtx", False),
]


def load_csr(path, transpose):
    """The dataset at `path` as a canonical float32 CSR (an edge list .txt.gz becomes the 0/1
    adjacency matrix of its largest node id + 1 nodes)."""
    if path.endswith(".txt.gz"):
        edges = np.loadtxt(path, dtype=np.int64, comments="#", ndmin=2)
        n = int(edges.max()) + 1 if len(edges) else 0
        m = sp.coo_matrix((np.ones(len(edges), np.float32), (edges[:, 0], edges[:, 1])),
                          shape=(n, n))
    else:
        m = scipy.io.mmread(path)
    return canonical_csr(m, transpose)


def canonical_csr(m, transpose):
    """A scipy matrix (or its transpose) as a canonical float32 CSR: duplicates summed, each row's
    columns sorted."""
    m = sp.csr_matrix(m, dtype=np.float32)
    if transpose:
        m = m.T.tocsr()
    m.sum_duplicates()
    m.sort_indices()
    return m


# Short strings as character 2- to 4-grams, as a new user would build them with scikit-learn: the
# words and symbols of three shared datasets (the KOS vocabulary, pbmc3k's gene symbols, the words
# of the SEC EDGAR company names), lower-cased, each once, in that order, at most 30,000.
CHAR_NGRAM_WORDS = "char-2-4-gram-words"
CHAR_NGRAM_WORDS_DESCRIPTION = (
    "the distinct lower-cased words and symbols of uci-bow-kos/vocab.kos.txt, pbmc3k/genes.tsv and "
    "the company names of sec-edgar-names/names.txt (in that order, at most 30,000) as "
    "sklearn.feature_extraction.text.TfidfVectorizer(analyzer='char', ngram_range=(2, 4)) rows")


def char_ngram_words(data_dir, limit=30000):
    """CHAR_NGRAM_WORDS from the data folder: a canonical float32 CSR (needs scikit-learn)."""
    import re
    from sklearn.feature_extraction.text import TfidfVectorizer

    words, seen = [], set()

    def add(w):
        w = w.strip().lower()
        if w and w not in seen:
            seen.add(w)
            words.append(w)

    with open(f"{data_dir}/uci-bow-kos/vocab.kos.txt") as f:
        for line in f:
            add(line)
    with open(f"{data_dir}/pbmc3k/genes.tsv") as f:
        for line in f:
            add(line.split("\t")[-1])
    with open(f"{data_dir}/sec-edgar-names/names.txt") as f:
        for line in f:
            for token in re.findall(r"[A-Za-z][A-Za-z'&-]+", line):
                add(token)
    vectorizer = TfidfVectorizer(analyzer="char", ngram_range=(2, 4), dtype=np.float32)
    return canonical_csr(vectorizer.fit_transform(words[:limit]), False)
