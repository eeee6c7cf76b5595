"""spira distance and spira knn on adversarial values against an exact oracle in Python.

The oracle (`exact`) is independent of numpy's float arithmetic: sums and products of the input
doubles are exact fractions.Fraction values; square roots, logarithms and powers are taken in
decimal.Decimal with 80 digits. It is checked against scipy.spatial.distance.cdist on small benign
inputs (test_oracle_matches_scipy_where_scipy_is_exact), where cdist is exact enough.

The guarantees checked, on the float32 output of the tool:
  S1  |d - exact| <= 1e-5 * max(|exact|, s), s = 1 for cosine, correlation and jensenshannon and 0
      for every other metric (plus float32's smallest subnormal, the rounding of a result near 0);
  S2  NaN only where a row of the pair has NaN; +-inf where the exact value is infinite or
      overflows float32; d(x, x) = 0 for finite x (kl_divergence excepted for entries below its
      epsilon 1e-10); equal infinite coordinates contribute 0. Where a pair with an infinite
      coordinate has no exact value defined by a limit (inf/inf in cosine, correlation, canberra,
      braycurtis, jensenshannon; inf - inf or inf * 0 in the sums of inner_product and
      kl_divergence), only the metric's range and "not NaN" are checked;
  S3  knn rows are sorted by the returned float32 value (NaN last), then by the smaller index
      (docs/knn.md: without --exclude-self, when the index is queried against itself, a point comes
      before every other index at its own value); an unlisted row can never be better than the
      k-th listed one, and of two exact duplicate rows the one that ranks first is listed first;
  S4  correlation treats a row as constant only when all its k columns (stored or not) are equal.
"""
import math
import os
import unittest
from decimal import Context, Decimal
from fractions import Fraction

import numpy as np
from scipy.spatial.distance import cdist

from clitest import CliTestCase

METRICS = ["cosine", "euclidean", "sqeuclidean", "manhattan", "chebyshev", "minkowski", "canberra",
           "braycurtis", "hamming", "jaccard", "dice", "russellrao", "correlation", "jensenshannon",
           "hellinger", "kl_divergence", "inner_product"]
NONNEGATIVE = {"jensenshannon", "hellinger", "kl_divergence"}
FLOOR = {"cosine": 1, "correlation": 1, "jensenshannon": 1}
KL_EPSILON = 1e-10
F32_MAX = Fraction(float(np.finfo(np.float32).max))
F32_TINY = Fraction(2) ** -149
BOUND = Fraction(1, 100000)
INF = math.inf
CTX = Context(prec=80, Emax=10**7, Emin=-10**7)


class Range:
    """No exact value (an undefined limit): the result must lie in [lo, hi], NaN only if nan_ok."""

    def __init__(self, lo, hi, nan_ok=False):
        self.lo, self.hi, self.nan_ok = lo, hi, nan_ok


def dec(q):
    return CTX.divide(Decimal(q.numerator), Decimal(q.denominator))


def sqrt(q):
    return Fraction(CTX.sqrt(dec(q)))


def ln(q):
    return Fraction(CTX.ln(dec(q)))


def abs_diff(a, b):
    """|a - b| exactly; equal coordinates (equal infinities included) give 0."""
    if a == b:
        return Fraction(0)
    if math.isinf(a) or math.isinf(b):
        return INF
    return abs(Fraction(a) - Fraction(b))


def cosine_distance(u, v):
    uv = sum((a * b for a, b in zip(u, v)), Fraction(0))
    uu = sum((a * a for a in u), Fraction(0))
    vv = sum((b * b for b in v), Fraction(0))
    return min(max(1 - uv / sqrt(uu * vv), Fraction(0)), Fraction(2))


def exact(metric, x, y, p=2.0):
    """The exact distance of two dense rows of doubles without NaN: a Fraction, +-inf or a Range."""
    k = len(x)
    any_inf = any(math.isinf(v) for v in list(x) + list(y))
    if metric == "inner_product":
        s, pos, neg, undefined = Fraction(0), False, False, False
        for a, b in zip(x, y):
            if a == 0 or b == 0:  # a missing entry is 0; inf * 0 has no value
                undefined |= math.isinf(a) or math.isinf(b)
            elif math.isinf(a) or math.isinf(b):
                pos, neg = (True, neg) if (a > 0) == (b > 0) else (pos, True)
            else:
                s += Fraction(a) * Fraction(b)
        if undefined or (pos and neg):
            return Range(-INF, INF, nan_ok=True)
        return INF if pos else -INF if neg else s
    if metric in ("euclidean", "sqeuclidean", "manhattan", "chebyshev", "minkowski"):
        d = [abs_diff(a, b) for a, b in zip(x, y)]
        if any(t == INF for t in d):
            return INF
        if metric == "manhattan":
            return sum(d, Fraction(0))
        if metric == "chebyshev":
            return max(d)
        if metric == "minkowski":
            big = max(d)
            if big == 0:
                return Fraction(0)
            s = sum((CTX.power(dec(t / big), Decimal(p)) for t in d), Decimal(0))
            return big * Fraction(CTX.power(s, CTX.divide(Decimal(1), Decimal(p))))
        s = sum((t * t for t in d), Fraction(0))
        return s if metric == "sqeuclidean" else sqrt(s)
    if metric == "canberra":
        if any_inf:
            return Range(0, k)
        return sum((abs(Fraction(a) - Fraction(b)) / (abs(Fraction(a)) + abs(Fraction(b)))
                    for a, b in zip(x, y) if a != b), Fraction(0))
    if metric == "braycurtis":
        if any_inf:
            return Range(0, INF)
        num = sum((abs_diff(a, b) for a, b in zip(x, y)), Fraction(0))
        den = sum((abs(Fraction(a) + Fraction(b)) for a, b in zip(x, y)), Fraction(0))
        if den == 0:
            return Fraction(0) if num == 0 else INF
        return num / den
    if metric == "cosine":
        if any_inf:
            return Range(0, 2)
        zx, zy = all(a == 0 for a in x), all(b == 0 for b in y)
        if zx or zy:
            return Fraction(0 if zx and zy else 1)
        return cosine_distance([Fraction(a) for a in x], [Fraction(b) for b in y])
    if metric == "correlation":
        if any_inf:
            return Range(0, 2)
        cx, cy = all(a == x[0] for a in x), all(b == y[0] for b in y)
        if cx or cy:
            return Fraction(0 if cx and cy else 1)
        fx, fy = [Fraction(a) for a in x], [Fraction(b) for b in y]
        mx, my = sum(fx) / k, sum(fy) / k
        return cosine_distance([a - mx for a in fx], [b - my for b in fy])
    if metric in ("hamming", "jaccard", "dice", "russellrao"):
        if metric == "hamming":
            return Fraction(sum(a != b for a, b in zip(x, y)), k)
        tt = sum(a != 0 and b != 0 for a, b in zip(x, y))
        tf = sum(a != 0 and b == 0 for a, b in zip(x, y))
        ft = sum(a == 0 and b != 0 for a, b in zip(x, y))
        if metric == "russellrao":
            return Fraction(k - tt, k)
        den = tt + tf + ft if metric == "jaccard" else 2 * tt + tf + ft
        return Fraction(0) if den == 0 else Fraction(tf + ft, den)
    if metric == "jensenshannon":
        js_max = sqrt(ln(Fraction(2)))
        if any_inf:
            return Range(0, js_max)
        sx, sy = sum(map(Fraction, x)), sum(map(Fraction, y))
        if sx == 0 or sy == 0:
            return Fraction(0) if sx == sy else js_max
        js = Fraction(0)
        for a, b in zip(x, y):
            pc, qc = Fraction(a) / sx, Fraction(b) / sy
            mc = (pc + qc) / 2
            js += (pc * ln(pc / mc) if pc > 0 else 0) + (qc * ln(qc / mc) if qc > 0 else 0)
        return sqrt(max(js, Fraction(0)) / 2)
    if metric == "hellinger":
        s = Fraction(0)
        for a, b in zip(x, y):
            if a == b:
                continue
            if math.isinf(a) or math.isinf(b):
                return INF
            t = (Fraction(a) - Fraction(b)) / (sqrt(Fraction(a)) + sqrt(Fraction(b)))
            s += t * t
        return sqrt(s / 2)
    if metric == "kl_divergence":
        s, pos, neg = Fraction(0), False, False
        for a, b in zip(x, y):
            if a == 0:
                continue
            if math.isinf(a) or math.isinf(b):
                if a != b:
                    pos, neg = (True, neg) if math.isinf(a) else (pos, True)
                continue
            s += Fraction(a) * ln(Fraction(a) / Fraction(max(b, KL_EPSILON)))
        if pos and neg:
            return Range(-INF, INF, nan_ok=True)
        return INF if pos else -INF if neg else s
    raise ValueError(metric)


def bound_scale(metric, x, y):
    """The s of the bound S1 for the pair (x, y) (docs/metrics.md): 1 for the bounded metrics;
    for inner_product, a plain dot product, sum |x y| (the bound of BLAS); for kl_divergence,
    whose terms have both signs, sum |x log(x / max(y, eps))|; else 0 (a relative bound)."""
    if metric == "inner_product":
        return sum((abs(Fraction(a) * Fraction(b)) for a, b in zip(x, y)
                    if a != 0 and b != 0 and not (math.isinf(a) or math.isinf(b))), Fraction(0))
    if metric == "kl_divergence":
        return sum((abs(Fraction(a) * ln(Fraction(a) / max(Fraction(b), Fraction(KL_EPSILON))))
                    for a, b in zip(x, y) if a > 0 and not (math.isinf(a) or math.isinf(b))),
                   Fraction(0))
    return FLOOR.get(metric, 0)


def admissible(got, want, metric, scale=0):
    """S1/S2: may the float32 result `got` be returned for the exact value `want`? `scale`: the
    pair's bound_scale."""
    if isinstance(want, Range):
        return want.nan_ok if math.isnan(got) else want.lo <= got <= want.hi
    if math.isnan(got):
        return False
    if isinstance(want, float):  # +-inf
        return got == want
    b = BOUND * max(abs(want), scale) + F32_TINY
    if math.isinf(got):
        return want + b > F32_MAX if got > 0 else want - b < -F32_MAX
    return abs(Fraction(got) - want) <= b


def least_favourable(want, metric, largest, scale=0):
    """The worst float32 value a pair may be returned with: highest (distances), lowest
    (similarities); None without an exact value. `scale`: the pair's bound_scale."""
    if isinstance(want, Range):
        return None
    if isinstance(want, float):
        return want
    b = BOUND * max(abs(want), scale) + F32_TINY
    v = want - b if largest else want + b
    return (INF if v > 0 else -INF) if abs(v) > F32_MAX else v


def show(want):
    """A readable exact value (a Fraction may not fit a float)."""
    if isinstance(want, Range):
        return f"in [{want.lo}, {want.hi}]"
    if isinstance(want, float):
        return repr(want)
    return f"{dec(want):.10g}"


def has_nan(row):
    return any(math.isnan(v) for v in row)


def write_mtx(path, rows):
    """Writes dense rows as a coordinate Matrix Market file: zeros are not stored, values in repr
    (round-trip exact), inf and nan as such."""
    entries = [(i, j, v) for i, r in enumerate(rows) for j, v in enumerate(r) if v != 0]
    with open(path, "w") as f:
        f.write("%%MatrixMarket matrix coordinate real general\n")
        f.write(f"{len(rows)} {len(rows[0])} {len(entries)}\n")
        for i, j, v in entries:
            f.write(f"{i + 1} {j + 1} {repr(float(v))}\n")
    return path


def adversarial_rows(rng, n, k, scale, nonneg=False):
    """n x k rows: a shared coordinate `scale` plus offsets in steps of 1/8 (exact in double),
    small integers (ties), missing entries and exact duplicates of earlier rows."""
    rows = []
    for i in range(n):
        if i > 0 and rng.random() < 0.2:
            rows.append(list(rows[int(rng.integers(0, i))]))
            continue
        r = []
        for _ in range(k):
            u = rng.random()
            if u < 0.3:
                r.append(0.0)
            elif u < 0.75:
                r.append(scale + float(rng.integers(-800, 800)) / 8)
            else:
                r.append(float(rng.integers(1, 4)))
        rows.append([abs(v) for v in r] if nonneg else r)
    return rows


class NumericsTest(CliTestCase):
    # ---- helpers ----------------------------------------------------------------------------

    def distance(self, a, b=None, metric="euclidean", p=None):
        out = self.path("d.npy")
        args = ["distance", a] + ([b] if b else []) + ["--metric", metric, "-o", out]
        if metric == "minkowski":
            args += ["--p", p if p is not None else 3]
        self.assert_ok(*args)
        got = np.load(out)
        self.assertEqual(got.dtype, np.float32)
        return got

    def knn(self, index, k, metric, exclude_self=False, query=None, p=None):
        out = self.path("g.npz")
        args = ["knn", index, "-k", k, "--metric", metric, "-o", out]
        if exclude_self:
            args.append("--exclude-self")
        if query:
            args += ["--query", query]
        if metric == "minkowski":
            args += ["--p", p if p is not None else 3]
        self.assert_ok(*args)
        g = np.load(out)
        return g["indices"], g["distances"]

    def check_matrix(self, got, a_rows, b_rows, metric, p=3.0, label=""):
        bad = []
        for i, x in enumerate(a_rows):
            for j, y in enumerate(b_rows):
                if has_nan(x) or has_nan(y):
                    continue
                want = exact(metric, x, y, p)
                if not admissible(float(got[i, j]), want, metric, bound_scale(metric, x, y)):
                    bad.append(f"({i}, {j}) = {float(got[i, j])!r}, exact {show(want)}")
        self.assertFalse(bad, f"{label} {metric}: {len(bad)} pairs outside the bound: {bad[:6]}")

    def check_all_metrics(self, a_rows, b_rows=None, label="", p=3.0, write=write_mtx):
        """spira distance for all 17 metrics against the oracle (non-negative metrics on |A|)."""
        for metric in METRICS:
            with self.subTest(label=label, metric=metric):
                fix = (lambda rows: [[abs(v) for v in r] for r in rows]) if metric in NONNEGATIVE \
                    else (lambda rows: rows)
                a = fix(a_rows)
                pa = write(self.path("a" + (".npy" if write is write_npy else ".mtx")), a)
                b, pb = a, None
                if b_rows is not None:
                    b = fix(b_rows)
                    pb = write(self.path("b" + (".npy" if write is write_npy else ".mtx")), b)
                got = self.distance(pa, pb, metric, p)
                self.assertEqual(got.shape, (len(a), len(b)))
                self.check_matrix(got, a, b, metric, p, label)

    def check_knn(self, idx, dist, index_rows, query_rows, metric, k, exclude_self, p=3.0,
                  label=""):
        """S1-S3 on a knn result (see the module comment)."""
        largest = metric == "inner_product"
        self.assertEqual(idx.shape, (len(query_rows), k))
        self_first = index_rows is query_rows and not exclude_self

        def rank(r, j):  # the tie break: the point itself first (self_first), then the index
            return (0 if self_first and j == r else 1, j)

        def before(r, a, b):  # (value, index) pairs of query row r
            (va, ia), (vb, ib) = a, b
            if math.isnan(va) or math.isnan(vb):
                return math.isnan(vb)
            if va != vb:
                return va > vb if largest else va < vb
            return rank(r, ia) < rank(r, ib)

        where = f"{label} {metric} k={k}{' exclude_self' if exclude_self else ''}"
        for r, q in enumerate(query_rows):
            listed = [(float(dist[r, c]), int(idx[r, c])) for c in range(k)]
            js = [j for _, j in listed]
            self.assertEqual(len(set(js)), k, f"{where} row {r}: an index listed twice: {js}")
            if exclude_self:
                self.assertNotIn(r, js, f"{where} row {r} lists itself")
            for c in range(1, k):
                self.assertTrue(before(r, listed[c - 1], listed[c]),
                                f"{where} row {r}: not sorted by (value, index): {listed}")
            for v, j in listed:
                if not (has_nan(q) or has_nan(index_rows[j])):
                    want = exact(metric, q, index_rows[j], p)
                    self.assertTrue(admissible(v, want, metric,
                                               bound_scale(metric, q, index_rows[j])),
                                    f"{where} row {r}: {j} listed at {v!r}, exact {show(want)}")
            v_k = listed[-1][0]
            for j, x in enumerate(index_rows):
                if j in js or (exclude_self and j == r) or has_nan(q) or has_nan(x):
                    continue
                worst = least_favourable(exact(metric, q, x, p), metric, largest,
                                         bound_scale(metric, q, x))
                if worst is None:
                    continue
                better = math.isnan(v_k) or (worst > v_k if largest else worst < v_k)
                self.assertFalse(better, f"{where} row {r}: unlisted {j} (least favourable "
                                         f"{show(worst)}) beats the k-th listed {listed}")
            if not has_nan(q):
                for j in js:
                    for d in range(len(index_rows)):
                        if rank(r, d) < rank(r, j) and d not in js \
                                and not (exclude_self and d == r) \
                                and index_rows[d] == index_rows[j] and not has_nan(index_rows[j]):
                            self.fail(f"{where} row {r}: lists {j} but not its exact duplicate "
                                      f"{d}: {listed}")

    # ---- the oracle itself ---------------------------------------------------------------------

    def test_oracle_matches_scipy_where_scipy_is_exact(self):
        rng = np.random.default_rng(7)
        a = rng.integers(1, 9, size=(5, 6)).astype(float) * rng.choice([0, 1], size=(5, 6), p=[.3, .7])
        b = rng.integers(1, 9, size=(4, 6)).astype(float) * rng.choice([0, 1], size=(4, 6), p=[.3, .7])
        a[:, 0] += 1  # no all-zero or constant rows (scipy gives nan there)
        b[:, 1] += 2
        names = {"manhattan": "cityblock"}
        for metric in METRICS:
            if metric in ("hellinger", "kl_divergence", "inner_product"):
                continue
            kw = {"p": 3} if metric == "minkowski" else {}
            x, y = (a != 0, b != 0) if metric in ("jaccard", "dice", "russellrao") else (a, b)
            want = cdist(x, y, names.get(metric, metric), **kw)
            got = np.array([[float(exact(metric, list(r), list(s), 3.0)) for s in b] for r in a])
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14, err_msg=metric)
        np.testing.assert_allclose(
            [[float(exact("inner_product", list(r), list(s))) for s in b] for r in a], a @ b.T)
        hel = np.sqrt(((np.sqrt(a)[:, None, :] - np.sqrt(b)[None, :, :]) ** 2).sum(2) / 2)
        np.testing.assert_allclose(
            [[float(exact("hellinger", list(r), list(s))) for s in b] for r in a], hel, rtol=1e-12)
        self.assertEqual(exact("euclidean", [1e9, 0.5], [1e9, 0.25]), Fraction(1, 4))
        self.assertEqual(float(exact("minkowski", [1, 2, 3], [4, 6, 8], 1e6)), 5.0)

    # ---- S1: shared large coordinates ----------------------------------------------------------

    def test_issue_reproducer_e9(self):
        rows = [[1e9, 0.5], [1e9, 0.25], [1e9, 100]]
        got = self.distance(write_mtx(self.path("e9.mtx"), rows), metric="euclidean")
        self.assertEqual(float(got[0, 1]), 0.25)
        self.assertAlmostEqual(float(got[0, 2]), 99.5, delta=99.5e-5)
        self.assertAlmostEqual(float(got[1, 2]), 99.75, delta=99.75e-5)
        self.check_all_metrics(rows, label="e9")

    def test_shared_coordinate_at_other_scales_and_shapes(self):
        rng = np.random.default_rng(2024)
        for scale, (m, n, k) in [(1e5, (6, 5, 4)), (1e7, (5, 7, 3)), (3e9, (7, 4, 6)),
                                 (1e12, (4, 6, 5)), (2.5e15, (5, 5, 2))]:
            a = adversarial_rows(rng, m, k, scale)
            b = adversarial_rows(rng, n, k, scale)
            self.check_all_metrics(a, b, label=f"scale {scale:g} A {m}x{k} B {n}x{k}")

    def test_shared_coordinate_from_npy(self):
        rng = np.random.default_rng(5)
        a = adversarial_rows(rng, 6, 4, 7.5e8)
        self.check_all_metrics(a, label="npy 7.5e8", write=write_npy)

    # ---- S4: correlation's constant rows --------------------------------------------------------

    def test_correlation_constant_rows(self):
        for base in (1e7, 1e5, 1e9, 1e12, 1e14):
            rows = [[base, base + 1, base + 2], [base + 2, base + 1, base], [base, base, base],
                    [base, base, 0], [base, 0, base]]
            got = self.distance(write_mtx(self.path("c.mtx"), rows), metric="correlation")
            self.assertAlmostEqual(float(got[0, 1]), 2.0, delta=1e-5, msg=f"base {base:g}")
            self.assertAlmostEqual(float(got[0, 2]), 1.0, delta=1e-5, msg=f"base {base:g}")
            self.assertAlmostEqual(float(got[3, 4]), 1.5, delta=1e-5, msg=f"base {base:g}")
            self.assertAlmostEqual(float(got[2, 3]), 1.0, delta=1e-5, msg=f"base {base:g}")
            self.check_matrix(got, rows, rows, "correlation", label=f"base {base:g}")

    # ---- S2: inf, NaN, huge values, large p ----------------------------------------------------

    def test_inf_gives_inf_not_nan(self):
        a, b = [[1.0, 2.0], [INF, 1.0]], [[INF, 0.0], [INF, 2.0], [-INF, 3.0]]
        got = self.distance(write_mtx(self.path("a.mtx"), a), write_mtx(self.path("b.mtx"), b),
                            metric="manhattan")
        self.assertEqual(float(got[0, 0]), INF)  # the issue: NaN
        self.assertEqual(float(got[1, 1]), 1.0)  # equal infinities contribute 0
        self.check_all_metrics(a, b, label="inf")

    def test_nan_only_where_the_input_has_nan(self):
        rows = [[1.0, 2.0, 0.0], [math.nan, 1.0, 0.0], [3.0, 0.0, 1.0], [1.0, 2.0, 0.0]]
        for metric in METRICS:
            with self.subTest(metric=metric):
                got = self.distance(write_mtx(self.path("n.mtx"), rows), metric=metric)
                clean = [0, 2, 3]
                self.assertFalse(np.isnan(got[np.ix_(clean, clean)]).any(), f"{metric}: {got}")
                self.check_matrix(got, rows, rows, metric)

    def test_values_above_1e154(self):
        big = [[3e160, 1e160, 0], [1e160, 3e160, 0], [0, 0, 5e155], [2e154, 2e154, 2e154],
               [1e200, 0, 1]]
        for metric in METRICS:
            with self.subTest(metric=metric):
                got = self.distance(write_mtx(self.path("h.mtx"), big), metric=metric)
                self.assertFalse(np.isnan(got).any(), f"{metric}: {got}")
        self.check_all_metrics(big, label="1e154")
        path = write_mtx(self.path("h.mtx"), big)
        idx, dist = self.knn(path, 2, "euclidean")
        np.testing.assert_array_equal(idx[:, 0], np.arange(len(big)), "each point first")
        np.testing.assert_array_equal(dist[:, 0], 0)
        self.check_knn(idx, dist, big, big, "euclidean", 2, False)

    def test_float32_overflow_is_inf(self):
        rows = [[3e38, -3e38], [-3e38, 3e38], [1e30, 1e30]]
        got = self.distance(write_mtx(self.path("o.mtx"), rows), metric="euclidean")
        self.assertEqual(float(got[0, 1]), INF)
        self.assertEqual(float(got[0, 0]), 0.0)
        self.check_all_metrics(rows, label="float32 overflow")

    def test_minkowski_large_p(self):
        rows = [[1.0, 2.0, 3.0], [4.0, 6.0, 8.0], [1e9 + 1, 1e9 + 2, 0], [1e9, 1e9, 0.5]]
        path = write_mtx(self.path("m.mtx"), rows)
        for p in (1000, 1e6, 1.5, 40):
            with self.subTest(p=p):
                got = self.distance(path, metric="minkowski", p=p)
                self.assertFalse(np.isnan(got).any(), f"p = {p}: {got}")
                np.testing.assert_array_equal(np.diag(got), 0, f"d(x, x) at p = {p}")
                self.check_matrix(got, rows, rows, "minkowski", p=p, label=f"p = {p}")

    def test_kl_divergence_self_distance(self):
        rows = [[0.5, 1e-3, 2.0], [1e-12, 1.0, 0.0], [1e9, 1e9 + 0.5, 3.0]]
        got = self.distance(write_mtx(self.path("k.mtx"), rows), metric="kl_divergence")
        self.assertEqual(float(got[0, 0]), 0.0)
        self.assertEqual(float(got[2, 2]), 0.0)
        self.check_matrix(got, rows, rows, "kl_divergence")

    # ---- S3: the k-NN tie rule -----------------------------------------------------------------

    def test_knn_issue_tie_example(self):
        rows = [[1, 1, 0, 0], [0, 3, 0, 0], [2, 0, 0, 0], [0, 0, 0, 5], [3, 0, 0, 0], [0, 1, 0, 0]]
        path = write_mtx(self.path("t.mtx"), rows)
        idx, dist = self.knn(path, 3, "cosine", exclude_self=True)
        self.assertEqual(list(idx[0]), [1, 2, 4])
        np.testing.assert_allclose(dist[0], 1 - 1 / math.sqrt(2), rtol=1e-6)
        idx2, _ = self.knn(path, 2, "cosine", exclude_self=True)
        self.assertEqual(list(idx2[0]), [1, 2])
        idx4, _ = self.knn(path, 4, "cosine")
        self.assertEqual(list(idx4[0]), [0, 1, 2, 4])
        for metric in ("cosine", "euclidean", "manhattan", "jaccard", "inner_product"):
            for k, ex in ((3, True), (2, True), (4, False)):
                with self.subTest(metric=metric, k=k, exclude_self=ex):
                    i, d = self.knn(path, k, metric, exclude_self=ex)
                    self.check_knn(i, d, rows, rows, metric, k, ex)

    def test_knn_ties_in_float32_but_not_in_double(self):
        # From [0, 0]: row 0 at sqrt(1 + 2^-24) (just below 1 + 2^-25), row 1 at 1: both 1.0 as
        # float32, so the smaller index comes first although row 1 is nearer in double.
        index = [[1.0, 2.0 ** -12], [1.0, 0.0], [2.0, 0.0], [1.0, 2.0 ** -12]]
        query = [[0.0, 0.0], [1e-30, 0.0]]
        pi, pq = write_mtx(self.path("i.mtx"), index), write_npy(self.path("q.npy"), query)
        idx, dist = self.knn(pi, 3, "euclidean", query=pq)
        self.assertEqual(list(idx[0]), [0, 1, 3])
        np.testing.assert_array_equal(dist[0], [1, 1, 1])
        self.check_knn(idx, dist, index, query, "euclidean", 3, False)

    def test_knn_adversarial_against_the_oracle(self):
        rng = np.random.default_rng(11)
        cases = [(1e9, 9, 4, "euclidean"), (1e12, 8, 3, "manhattan"), (1e7, 10, 5, "correlation"),
                 (1e5, 9, 4, "cosine"), (3e9, 8, 4, "braycurtis"), (1e9, 7, 3, "sqeuclidean"),
                 (1e9, 8, 4, "minkowski"), (1e6, 8, 3, "hellinger"), (1e6, 8, 4, "inner_product"),
                 (2e8, 8, 3, "canberra"), (5e7, 7, 4, "jensenshannon"), (1e3, 8, 3, "chebyshev"),
                 (1e10, 8, 5, "hamming"), (1e4, 7, 4, "kl_divergence")]
        for scale, n, k_cols, metric in cases:
            rows = adversarial_rows(rng, n, k_cols, scale, nonneg=metric in NONNEGATIVE)
            path = write_mtx(self.path("x.mtx"), rows)
            for k, ex in ((1, False), (3, True), (n - 1, True), (n, False)):
                with self.subTest(metric=metric, scale=scale, k=k, exclude_self=ex):
                    idx, dist = self.knn(path, k, metric, exclude_self=ex)
                    self.check_knn(idx, dist, rows, rows, metric, k, ex, label=f"scale {scale:g}")
            queries = adversarial_rows(rng, 4, k_cols, scale, nonneg=metric in NONNEGATIVE)
            with self.subTest(metric=metric, scale=scale, queries=True):
                idx, dist = self.knn(path, 3, metric, query=write_mtx(self.path("q.mtx"), queries))
                self.check_knn(idx, dist, rows, queries, metric, 3, False, label="queries")


def write_npy(path, rows):
    np.save(path, np.array(rows, dtype=np.float64))
    return path


if __name__ == "__main__":
    unittest.main()
