#!/usr/bin/env python3
"""Writes a copy of a Matrix Market file (coordinate, .mtx or .mtx.gz) with every `every`-th row
emptied (its entries dropped, the shape kept): a k-NN input with many all-zero query rows (the
fused kernel takes them from the index rows' all-zero flags where the distance declares their
value, cosine: docs/knn.md).

usage: bench/knn/empty_rows.py IN.mtx[.gz] OUT.mtx EVERY
"""
import gzip
import sys


def main():
    src, dst, every = sys.argv[1], sys.argv[2], int(sys.argv[3])
    opener = gzip.open if src.endswith(".gz") else open
    with opener(src, "rt") as f, open(dst, "w") as out:
        header = f.readline()
        out.write(header)
        line = f.readline()
        while line.startswith("%"):
            line = f.readline()
        rows, cols, _ = line.split()
        kept = []
        for entry in f:
            parts = entry.split()
            if parts and (int(parts[0]) - 1) % every != 0:
                kept.append(entry if entry.endswith("\n") else entry + "\n")
        out.write(f"{rows} {cols} {len(kept)}\n")
        out.writelines(kept)


if __name__ == "__main__":
    main()
