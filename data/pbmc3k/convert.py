"""Writes this folder's files from the shared copy of 10x Genomics' pbmc3k (see data/README.md).

    python3 data/pbmc3k/convert.py ../shared/data/pbmc3k

counts.npz: the UMI counts of the 2,638 labelled cells, cells x genes (the shared matrix is genes x
cells, as 10x ships it), int32, SciPy CSR with sorted indices; cells.tsv: each row's barcode and
cell type; genes.tsv: the gene symbols in column order. The counts are not changed otherwise.
"""

import sys
from pathlib import Path

import numpy as np
import scipy.io
import scipy.sparse as sp


def main(source):
    source, here = Path(source), Path(__file__).resolve().parent
    counts = sp.csr_matrix(scipy.io.mmread(source / "matrix.mtx.gz").T)  # cells x genes
    barcodes = (source / "barcodes.tsv").read_text().split()
    labels = [line.split("\t") for line in (source / "cell_types.tsv").read_text().splitlines()[1:]]
    assert [b for b, _ in labels] == barcodes, "cell_types.tsv lists the cells in matrix order"
    keep = np.array([cell_type != "NA" for _, cell_type in labels])
    counts = counts[keep].astype(np.int32)
    counts.sort_indices()
    sp.save_npz(here / "counts.npz", counts, compressed=True)
    rows = [f"{b}\t{t}" for (b, t), k in zip(labels, keep) if k]
    (here / "cells.tsv").write_text("barcode\tcell_type\n" + "\n".join(rows) + "\n")
    (here / "genes.tsv").write_text((source / "genes.tsv").read_text())
    print(f"{counts.shape[0]} cells x {counts.shape[1]} genes, {counts.nnz} nonzeros")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "../shared/data/pbmc3k")
