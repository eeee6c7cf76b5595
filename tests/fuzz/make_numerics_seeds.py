"""Writes the seed corpus of fuzz_numerics (tests/fuzz/corpus/numerics/): the reproducers of the
numeric issues (shared large coordinates, inf, values above 1e154, tie order, correlation's constant
rows) and a few table-driven mixes, in the byte format that fuzz_numerics.cpp decodes:

  flags  bits 0-1: values/indices (0 float/int32, 1 double/int32, 2 float/int64, 3 double/int64)
         bit 2: exclude_self, bit 3: a separate B (queries), bits 4-7: k = 1 + (flags >> 4) % max_k
  rows_a - 1, cols - 1, [rows_b - 1 when separate], misc (base = table[misc % 8],
  knn p = {1, 1.5, 2, 3, 1000, 1e6}[(misc / 8) % 6])
  per row: op (op % 8 == 7: a copy of row (op / 8) % r), else one cell per column:
    kind = cell & 15 (5 explicit 0, 6 small integer, 7 base + offset, 8 huge, 9 tiny, 10 inf,
    11 NaN, 12 raw bits in the next 4/8 bytes, 13 the entry above, 14 middling, else absent),
    sign = cell & 16, sel = cell >> 5.

Run: python3 tests/fuzz/make_numerics_seeds.py (rewrites the corpus).
"""
import os
import struct

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus", "numerics")
ABSENT = 0


def flags(double, int64=False, exclude_self=False, separate=False, k_sel=0):
    return (int(double) | (2 if int64 else 0) | (4 if exclude_self else 0) | (8 if separate else 0)
            | (k_sel << 4))


def raw(v, double):
    return bytes([12]) + (struct.pack("<d", v) if double else struct.pack("<f", v))


def cell(v, double):
    """A value as a cell: None is absent, 0 an explicit zero, else its raw bits."""
    if v is None:
        return bytes([ABSENT])
    return raw(v, double)


def matrix(rows, double):
    out = b""
    for r in rows:
        out += bytes([0]) + b"".join(cell(v, double) for v in r)
    return out


def seed(rows_a, double, int64=False, exclude_self=False, k_sel=0, rows_b=None, misc=0):
    cols = len(rows_a[0])
    head = bytes([flags(double, int64, exclude_self, rows_b is not None, k_sel), len(rows_a) - 1,
                  cols - 1])
    if rows_b is not None:
        head += bytes([len(rows_b) - 1])
    body = head + bytes([misc]) + matrix(rows_a, double)
    if rows_b is not None:
        body += matrix(rows_b, double)
    return body


inf, nan = float("inf"), float("nan")
seeds = {
    "e9_double": seed([[1e9, 0.5], [1e9, 0.25], [1e9, 100]], True, k_sel=2),
    "e9_float_int64": seed([[1e9, 0.5], [1e9, 0.25], [1e9, 100]], False, int64=True, k_sel=2),
    "e12_double": seed([[1e12, 0.5, None], [1e12, 0.25, 3], [1e12, 100, 3]], True, k_sel=1),
    "cosine_ties_k3": seed([[1, 1, None, None], [None, 3, None, None], [2, None, None, None],
                            [None, None, None, 5], [3, None, None, None], [None, 1, None, None]],
                           True, exclude_self=True, k_sel=2),
    "cosine_ties_k2_float": seed([[1, 1, None, None], [None, 3, None, None], [2, None, None, None],
                                  [None, None, None, 5], [3, None, None, None],
                                  [None, 1, None, None]], False, exclude_self=True, k_sel=1),
    "inf_manhattan": seed([[1, 2], [inf, 0]], True, k_sel=1),
    "inf_equal_coordinates": seed([[inf, 1], [inf, 2], [-inf, 1]], False, k_sel=2),
    "above_1e154": seed([[1e155, 2e155, None], [3e155, 1e155, 1], [1e160, None, 2e154],
                         [1e155, 2e155, 5]], True, k_sel=3, misc=8 * 4),
    "float_max": seed([[3e38, -3e38], [-3e38, 3e38], [3.4e38, None]], False, k_sel=2, misc=8 * 5),
    "double_max": seed([[1.7e308, -1.7e308], [-1.7e308, 1.7e308], [1e308, None]], True, k_sel=2),
    "correlation_1e7": seed([[1e7, 1e7 + 1, 1e7 + 2], [1e7 + 2, 1e7 + 1, 1e7], [1e7, 1e7, 1e7]],
                            True, k_sel=1),
    "correlation_1e7_float": seed([[1e7, 1e7 + 1, 1e7 + 2], [1e7 + 2, 1e7 + 1, 1e7]], False),
    "subnormal": seed([[1e-310, 5e-324], [2e-310, None], [None, 1e-320]], True, k_sel=2),
    "subnormal_float": seed([[1e-40, 1.4e-45], [2e-40, None], [None, 1e-44]], False, k_sel=2),
    "nan_and_duplicates": seed([[1, nan, 2], [1, 2, 3], [1, 2, 3], [nan, None, None], [1, 2, 3]],
                               False, exclude_self=True, k_sel=2),
    "separate_queries": seed([[1e9, 1], [None, 2]], True, rows_b=[[1e9, 0.5], [1e9, 3], [1, 1]],
                             k_sel=1),
}
# Table-driven rows: the shared base plus offsets (kind 7), huge (8), tiny (9), inf (10), copies.
table = bytes([flags(True, k_sel=3), 5, 3, 3]) + bytes([
    0, 7, 7 | 32, 8, 9,
    0, 7 | 64, 7 | 96, 14, 5,
    7 | 8,  # a copy of row 0
    0, 10, 7 | 128, 9 | 32, 13,
    0, 6, 6 | 32, 6, 6 | 16,
    0, 7 | 160, 7, 8 | 64 | 16, 11,
])
seeds["table_mix_double"] = table
seeds["table_mix_float"] = bytes([flags(False, True, True, k_sel=3)]) + table[1:]

os.makedirs(OUT, exist_ok=True)
for name, data in seeds.items():
    with open(os.path.join(OUT, name + ".bin"), "wb") as f:
        f.write(data)
print(f"wrote {len(seeds)} seeds to {OUT}")
