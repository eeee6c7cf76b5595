#!/usr/bin/env python3
"""select_k benchmark driver: spira::select_k (bench/select_k/select_k.cu), torch.topk and CUB's
batched top-k side by side, in one run on one GPU, with the device-to-device copy bandwidth measured
in the same run.

    python3 bench/select_k/select_k.py --bench BUILD/select_k_bench --out bench/results [--quick]
        [--cub PATH/cub_topk_peer]

Writes <out>/select_k-<YYYY-MM-DD>.json; bench/select_k/select_k_table.py turns it into the table of
docs/bench-select.md. The memory floor of a case is (input read once + output written once) /
measured copy bandwidth (bytes read + written per second).

Dense rows: the RTop-K grid, LLM-style batches, binary_search against radix, adversarial
distributions (float32, largest, int64 indices; torch.topk on the same shapes).

The issue's grid ("peers", N(0,1) keys, auto): spira, torch.topk, and CUB through the harness --cub
names (default $SPIRA_CUB_PEER; shared/tools/peers/cub_topk_peer.cu), one process per case, its JSON
in "cub_runs" (CUB_CALL, and cub_peer.py's CUB_TIMING). Without a harness "cub_note" says why; a harness
that fails or runs past cub_peer.py's CUB_TIMEOUT seconds leaves an error on its case.

CSR rows of the datasets' distance graphs ("csr_graphs" in the results): for every dataset of
--data that loads as a sparse row matrix A, the graph holds the cosine distance between every pair
of rows of A that share a stored column (the stored pattern of A A^T, diagonal included), one CSR
row per row of A, float32 values, int32 columns, ragged row degrees; where it would exceed
--graph-max-entries (2^27) entries, only the first R rows of A are query rows (R reported as
"rows", A's count as "a_rows"). bench/select_k/select_k_graphs.py builds them with scipy on the CPU
(run as `python3 -s`; cached in --graphs-dir). Cases: k = 15 and 100, smallest, spira's CSR overload
(algo auto, unsorted, rows x k values and int32 column indices) against torch.topk(x, k, dim=1,
largest=False, sorted=False) on the same rows laid out as a dense rows x max(max_degree, k) matrix
padded with +inf (padded shape reported; torch's time excludes building it, reported apart as
"torch_pad_ms"; not run when the padded matrix would exceed 8 GiB, with the reason). Floor:
(values + column indices + row pointers read once, k values + int32 indices per row written once)
/ copy bandwidth. Check, per case: spira's output equals, as a set per row, the exact top-k with
the tie rule (smaller column wins among equal values; rows shorter than k padded with -1/+inf),
computed by torch with a stable sort of the padded rows; torch.topk's values are compared too.
A failed check, or a spira error on a graph, makes the script exit 1 after writing the results.
"""
import argparse
import datetime
import importlib
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench", "common"))  # gpu_info.py

from gpu_info import torch_device_and_version
from cub_peer import CUB_TIMING, LIKE_CUB, cub_case, cub_peer

GRAPH_KS = (15, 100)
CUB_CALL = ("cub::DeviceBatchedTopK::MinPairs through `cub_topk_peer batched ROWS LEN K`: the k "
            "smallest of every row (spira and torch: the largest; N(0,1) keys are symmetric), "
            "int32 column indices, unsorted output, ties not deterministic; the harness checks "
            "rows 0, 1/3, 1/2, 2/3 and the last against a sort on the host")
TORCH_PAD_LIMIT = 8 << 30  # bytes of the padded float32 matrix torch.topk gets
CHECK_CHUNK_BYTES = 2 << 30  # GPU memory of one row chunk of the check


def rtopk_grid(quick):
    rows = [1 << 14, 1 << 16] if quick else [1 << 14, 1 << 16, 1 << 18, 1 << 20]
    for r in rows:
        for n in (256, 512, 768):
            for k in (16, 32, 64, 96, 128):
                yield ("rtopk", r, n, k, "auto", "uniform")


def llm_batches(quick):
    for r in (1, 16, 64):
        for k in (50, 256, 1024, 4096, 16384, 32768):
            yield ("llm", r, 131072, k, "auto", "uniform")


def crossover(quick):
    # binary_search against radix where both apply: the data behind choose_select_algo
    for r in (1 << 10, 1 << 14):
        for n in (256, 1024, 2048):
            for k in (32, 256):
                for algo in ("binary_search", "radix"):
                    yield ("crossover", r, n, k, algo, "uniform")


def adversarial(quick):
    # 16 x 131072: the cluster form; 64 x 2^20: the multi-pass form (rows too long for a cluster)
    for rows, n in ((16, 131072), (64, 1 << 20)):
        for dist in ("uniform", "normal", "narrow"):
            for k in (50, 4096):
                yield ("adversarial", rows, n, k, "radix", dist)


def peers_grid(quick):
    # the grid, against CUB and torch.topk; normal keys, as CUB's harness draws them
    rows = [1 << 14, 1 << 16] if quick else [1 << 14, 1 << 16, 1 << 18, 1 << 20]
    lengths = (256, 2048) if quick else (256, 512, 768, 1024, 2048)
    for r in rows:
        for n in lengths:
            for k in ((16, 256) if quick else (16, 32, 64, 128, 256)):
                yield ("peers", r, n, k, "auto", "normal")
    for k in ((50, 32768) if quick else (50, 256, 1024, 4096, 16384, 32768)):
        yield ("peers", 16, 131072, k, "auto", "normal")


def hitrate_cases():
    for n in (256, 768):
        for k in (32, 128):
            for it in (2, 4, 6, 8, 10, 12, 16):
                yield (1 << 14, n, k, it)


def torch_topk_ms(rows, n, k, dist, reps=30):
    import torch
    numel = rows * n
    copies = max(1, min(16, (2 * 60 * 2**20 + 4 * numel - 1) // (4 * numel)))
    g = torch.Generator(device="cuda").manual_seed(7)
    xs = []
    for _ in range(copies):
        if dist == "normal":
            xs.append(torch.randn(rows, n, device="cuda", generator=g))
        elif dist == "narrow":
            xs.append(128.0 + torch.rand(rows, n, device="cuda", generator=g) / 64.0)
        else:
            xs.append(torch.rand(rows, n, device="cuda", generator=g))
    ms = median_event_ms(lambda i: torch.topk(xs[i % copies], k, dim=1, largest=True, sorted=False),
                         reps)
    xs.clear()  # free the copies before empty_cache
    torch.cuda.empty_cache()
    return ms


def median_event_ms(call, reps, warmup=3):
    """Median over `reps` calls of call(i) timed with CUDA events, after `warmup` calls."""
    import torch
    for i in range(warmup):
        call(i)
    torch.cuda.synchronize()
    a = torch.cuda.Event(enable_timing=True)
    b = torch.cuda.Event(enable_timing=True)
    times = []
    for i in range(reps):
        a.record()
        call(i)
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b))
    times.sort()
    return times[len(times) // 2]


def copies_for(nbytes):
    """As the C++ program: enough input copies that a rotation over them does not fit in L2."""
    l2_twice = 2 * 60 * 2**20
    return max(1, min(16, (l2_twice + nbytes - 1) // max(1, nbytes)))


def default_data_dir():
    carried = os.path.join(ROOT, ".carry", "data")
    return carried if os.path.isdir(carried) else os.path.join(ROOT, "..", "shared", "data")


def make_graphs(args, errors):
    """Builds (or reuses) the distance graphs with bench/select_k/select_k_graphs.py; returns its
    manifest, or None. Run as `python3 -s` (a user-site numpy 2 breaks a system scipy); when numpy
    and scipy do not import there (exit status 3), this interpreter without -s, then
    /usr/bin/python3 -s."""
    script = os.path.join(ROOT, "bench", "select_k", "select_k_graphs.py")
    opts = ["--data", args.data, "--out", args.graphs_dir, "--max-entries",
            str(args.graph_max_entries), "--workers", str(args.graph_workers)]
    if args.graph_datasets:
        opts += ["--datasets", args.graph_datasets]
    pythons = [[sys.executable, "-s"], [sys.executable]]
    system = "/usr/bin/python3"
    if os.path.exists(system) and os.path.realpath(system) != os.path.realpath(sys.executable):
        pythons.append([system, "-s"])
    proc = None
    for python in pythons:
        try:
            proc = subprocess.run(python + [script] + opts, capture_output=True, text=True,
                                  timeout=args.graph_timeout)
        except subprocess.TimeoutExpired:
            errors.append({"kind": "graph_error", "what": "select_k_graphs.py ran past %d s"
                           % args.graph_timeout})
            return None
        sys.stdout.write(proc.stdout)
        sys.stderr.write(proc.stderr)
        if proc.returncode != 3:
            break
    if proc.returncode != 0:
        errors.append({"kind": "graph_error", "what": "select_k_graphs.py exit %d: %s"
                       % (proc.returncode, proc.stderr.strip()[-500:])})
        return None
    with open(os.path.join(args.graphs_dir, "graphs.json")) as f:
        manifest = json.load(f)
    for e in manifest.get("errors", []):
        errors.append(dict(kind="graph_error", **e))
    return manifest


def spira_output_path(graphs_dir, dataset, k):
    return os.path.join(graphs_dir, "%s-k%d.spira.npz" % (dataset, k))


def file_summary(indptr, indices, data):
    """What select_k_bench reports about the file it read (the round-trip check)."""
    import numpy as np
    deg = np.diff(indptr)
    finite = np.isfinite(data)
    return dict(rows=len(deg), nnz=len(data), max_degree=int(deg.max()) if len(deg) else 0,
                empty_rows=int(np.count_nonzero(deg == 0)),
                col_sum=int(indices.astype(np.int64).sum()),
                finite_value_sum=float(data[finite].astype(np.float64).sum()),
                nonfinite_values=int(len(data) - np.count_nonzero(finite)))


def same_summary(a, b):
    keys = ("rows", "nnz", "max_degree", "empty_rows", "col_sum", "nonfinite_values")
    if any(int(a[key]) != int(b[key]) for key in keys):
        return False
    # the two sums add the same float32 values in different orders
    diff = abs(a["finite_value_sum"] - b["finite_value_sum"])
    return diff <= 1e-9 * (abs(b["finite_value_sum"]) + b["nnz"])


class PaddedRows:
    """A CSR on the GPU and its rows laid out densely, padded with +inf (torch.topk's input)."""

    def __init__(self, indptr, indices, data):
        import torch
        self.ptr = torch.as_tensor(indptr.astype("int64"), device="cuda")
        self.col = torch.as_tensor(indices.astype("int64"), device="cuda")
        self.val = torch.as_tensor(data, device="cuda")
        self.rows = len(indptr) - 1
        self.deg = self.ptr[1:] - self.ptr[:-1]

    def dense(self, r0, r1, width):
        """Rows [r0, r1) as an (r1 - r0) x width float32 matrix, +inf where a row has no entry."""
        import torch
        deg = self.deg[r0:r1]
        row = torch.repeat_interleave(torch.arange(r1 - r0, device="cuda"), deg)
        lo, hi = int(self.ptr[r0]), int(self.ptr[r1])
        pos = torch.arange(lo, hi, device="cuda") - self.ptr[r0:r1][row]
        x = torch.full((r1 - r0, width), float("inf"), device="cuda")
        x[row, pos] = self.val[lo:hi]
        return x

    def exact_smallest(self, x, r0, r1, k):
        """The tie rule's top-k of rows [r0, r1) (x = dense(r0, r1, width)): a stable sort puts
        equal values in position order, which is column order in a canonical CSR. Returns
        (columns, values), pads -1 / +inf."""
        import torch
        sv, pos = torch.sort(x, dim=1, stable=True)
        sv, pos = sv[:, :k], pos[:, :k]
        valid = pos < self.deg[r0:r1, None]
        if self.col.numel():
            at = (self.ptr[r0:r1, None] + pos).clamp(max=self.col.numel() - 1)
            cols = torch.where(valid, self.col[at], torch.full_like(pos, -1))
        else:
            cols = torch.full_like(pos, -1)
        vals = torch.where(valid, sv, torch.full_like(sv, float("inf")))
        return cols, vals


def as_row_sets(cols, vals):
    """Each row's (column, value) pairs in column order, pads (-1) last: equal as sets <=> equal."""
    import torch
    key = torch.where(cols < 0, torch.full_like(cols, 2**62), cols)
    key, order = torch.sort(key, dim=1)
    return key, torch.gather(vals, 1, order)


def torch_csr_case(pr, width, k, reps=30):
    """torch.topk on the padded rows: (median ms, ms to build one padded copy)."""
    import torch
    nbytes = pr.rows * width * 4
    copies = max(1, min(copies_for(nbytes), TORCH_PAD_LIMIT // max(1, nbytes)))
    a = torch.cuda.Event(enable_timing=True)
    b = torch.cuda.Event(enable_timing=True)
    a.record()
    xs = [pr.dense(0, pr.rows, width)]
    b.record()
    b.synchronize()
    pad_ms = a.elapsed_time(b)
    xs += [xs[0].clone() for _ in range(copies - 1)]
    ms = median_event_ms(lambda i: torch.topk(xs[i % copies], k, dim=1, largest=False, sorted=False),
                         reps)
    xs.clear()  # free the copies before empty_cache
    torch.cuda.empty_cache()
    return ms, pad_ms


def check_csr_graph(pr, width, outputs):
    """Compares spira's rows x k outputs ({k: (columns, values)}) with the exact top-k (tie rule)
    of one stable sort of the padded rows (width >= every k), in row chunks that keep the padded
    rows and their sort within about CHECK_CHUNK_BYTES. Returns {k: (spira ok, first bad row or
    None, output order ok, torch.topk values ok)}."""
    import torch
    got = {k: (torch.as_tensor(c.astype("int64"), device="cuda"), torch.as_tensor(v, device="cuda"))
           for k, (c, v) in outputs.items()}
    state = {k: [True, None, True, True] for k in outputs}
    kmax = max(outputs) if outputs else 0
    chunk = max(1, CHECK_CHUNK_BYTES // (width * 32))
    for r0 in range(0, pr.rows if outputs else 0, chunk):
        r1 = min(pr.rows, r0 + chunk)
        x = pr.dense(r0, r1, width)
        cols, vals = pr.exact_smallest(x, r0, r1, kmax)  # by value, then column
        for k, (sc, sv) in got.items():
            st = state[k]
            tv = torch.topk(x, k, dim=1, largest=False, sorted=True).values
            st[3] = st[3] and torch.equal(tv, vals[:, :k])  # both ascending by value
            del tv
            ek, ev = as_row_sets(cols[:, :k].contiguous(), vals[:, :k].contiguous())
            c, v = sc[r0:r1], sv[r0:r1]
            gk, gv = as_row_sets(c, v)
            st[2] = st[2] and torch.equal(torch.where(c < 0, torch.full_like(c, 2**62), c), gk)
            same = (ek == gk).all(dim=1) & (ev.view(torch.int32) == gv.view(torch.int32)).all(dim=1)
            if not bool(same.all()):
                st[0] = False
                if st[1] is None:
                    st[1] = r0 + int(torch.nonzero(~same)[0, 0])
        del x, cols, vals
    return {k: tuple(st) for k, st in state.items()}


def csr_graph_results(manifest, records, gbps, use_torch, errors):
    """One result per (graph, k): spira's time from the bench program, torch.topk's, the floor and
    the check."""
    import numpy as np
    by_case = {(r["file"], r["k"]): r for r in records}
    out = []
    for g in manifest["graphs"]:
        z = np.load(g["file"])
        indptr, indices, data = z["indptr"], z["indices"], z["data"]
        summary = file_summary(indptr, indices, data)
        pr = None
        if use_torch:
            try:
                pr = PaddedRows(indptr, indices, data)
            except Exception as e:
                errors.append({"kind": "torch_error", "case": g["dataset"], "what": str(e)})
        to_check = {}
        for k in GRAPH_KS:
            width = max(g["max_degree"], k)
            rec = dict(group="csr_graph", dataset=g["dataset"], source=g["source"],
                       a_rows=g["a_rows"], rows=g["rows"], truncated=g["truncated"],
                       cols=g["cols"], nnz=g["nnz"], min_degree=g["min_degree"],
                       median_degree=g["median_degree"], max_degree=g["max_degree"],
                       empty_rows=g["empty_rows"], k=k, order="smallest", algo="auto",
                       padded_shape=[g["rows"], width], torch_ms=None, ratio_to_torch=None,
                       torch_pad_ms=None, torch_note=None, check="not run", check_detail=None)
            got = by_case.get((g["file"], k))
            if got is None:
                rec.update(check="error", check_detail="select_k_bench gave no result (see errors)")
                out.append(rec)
                continue
            rec.update(resolved_algo=got["resolved_algo"], ms=got["ms"], bytes=got["bytes"],
                       copies=got["copies"])
            rec["floor_ms"] = got["bytes"] / (gbps * 1e6)
            rec["floor_fraction"] = rec["floor_ms"] / got["ms"]
            if not same_summary(got, summary):
                rec.update(check="fail", check_detail="the CSR select_k_bench read differs from "
                           "the file: %s against %s" % (
                               {q: got[q] for q in summary}, summary))
                out.append(rec)
                continue
            padded_bytes = g["rows"] * width * 4
            if pr is None:
                rec["torch_note"] = "not run: torch unavailable or --no-torch"
            elif padded_bytes > TORCH_PAD_LIMIT:
                rec["torch_note"] = ("not run: the padded %d x %d float32 matrix needs %.1f GiB "
                                     "(limit %.0f GiB)" % (g["rows"], width, padded_bytes / 2**30,
                                                          TORCH_PAD_LIMIT / 2**30))
            else:
                try:
                    rec["torch_ms"], rec["torch_pad_ms"] = torch_csr_case(pr, width, k)
                    rec["ratio_to_torch"] = rec["torch_ms"] / got["ms"]
                except Exception as e:  # report, do not hide
                    rec["torch_note"] = "failed: %s" % e
                    errors.append({"kind": "torch_error", "case": "%s k=%d" % (g["dataset"], k),
                                   "what": str(e)})
            if pr is not None:
                to_check[k] = rec
            out.append(rec)
        if to_check:
            try:
                outputs = {}
                for k in to_check:
                    res = np.load(spira_output_path(os.path.dirname(g["file"]), g["dataset"], k))
                    outputs[k] = (res["indices"], res["values"])
                verdicts = check_csr_graph(pr, max(g["max_degree"], max(to_check)), outputs)
                for k, (ok, bad, order_ok, torch_ok) in verdicts.items():
                    rec = to_check[k]
                    rec.update(check="pass" if ok else "fail", output_order_ok=order_ok,
                               torch_values_match=torch_ok)
                    if not ok:
                        rec["check_detail"] = "first differing row %d" % bad
            except Exception as e:
                for rec in to_check.values():
                    rec.update(check="error", check_detail="check failed to run: %s" % e)
        del pr
        if use_torch:
            import torch
            torch.cuda.empty_cache()
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bench", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--no-torch", action="store_true")
    ap.add_argument("--no-graphs", action="store_true", help="skip the CSR distance-graph cases")
    ap.add_argument("--data", default=default_data_dir(), help="the shared datasets folder")
    ap.add_argument("--graphs-dir", default=os.path.join(tempfile.gettempdir(),
                                                         "spira-select-k-graphs"),
                    help="where the distance graphs and spira's outputs on them are written")
    ap.add_argument("--graph-max-entries", type=int, default=None,
                    help="entries of a graph before its query rows are cut (2^27; --quick 2^24)")
    ap.add_argument("--graph-datasets", default="", help="comma-separated (default: all)")
    ap.add_argument("--graph-workers", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--graph-timeout", type=int, default=120)
    ap.add_argument("--cub", default=os.environ.get("SPIRA_CUB_PEER"),
                    help="the cub_topk_peer harness (default: $SPIRA_CUB_PEER; none: no CUB)")
    args = ap.parse_args()
    if args.graph_max_entries is None:
        args.graph_max_entries = 1 << (24 if args.quick else 27)

    errors = []
    peer, cub_info, cub_note = cub_peer(args.cub, errors)
    manifest = None
    if not args.no_graphs:
        manifest = make_graphs(args, errors)

    cases = list(rtopk_grid(args.quick)) + list(llm_batches(args.quick)) + \
        list(crossover(args.quick)) + list(adversarial(args.quick)) + list(peers_grid(args.quick))
    lines = ["copy"]
    lines += ["%d %d %d %s %s" % (r, n, k, algo, dist) for (_, r, n, k, algo, dist) in cases]
    if peer:
        lines += ["%d %d %d %s %s resident int32" % (r, n, k, algo, dist)
                  for (group, r, n, k, algo, dist) in cases if group == "peers"]
    lines += ["hitrate %d %d %d %d" % c for c in hitrate_cases()]
    for g in (manifest or {}).get("graphs", []):
        for k in GRAPH_KS:
            lines.append("csr %d auto %s %s" % (
                k, g["file"], spira_output_path(args.graphs_dir, g["dataset"], k)))
    proc = subprocess.run([args.bench], input="\n".join(lines) + "\n", capture_output=True,
                          text=True)
    sys.stderr.write(proc.stderr)
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "select_k-raw.jsonl"), "w") as f:
        f.write(proc.stdout)
    records = [json.loads(l) for l in proc.stdout.splitlines() if l.startswith("{")]
    copy = next(r for r in records if r["kind"] == "copy")
    gbps = copy["gbps"]
    like_cub = {(r["rows"], r["length"], r["k"]): r["ms"] for r in records
                if r["kind"] == "select_k" and r.get("resident")}
    spira_cases = [r for r in records if r["kind"] == "select_k" and not r.get("resident")]
    errors += [r for r in records if r["kind"] == "error"]

    peer_cells = [(r, n, k) for (group, r, n, k, _, _) in cases if group == "peers"]
    cub, cub_runs = {}, []  # (rows, length, k) -> CUB's fields; the harness's JSON lines
    for (r, n, k) in (peer_cells if peer else []):
        reps = 10 if r * n >= 1 << 26 else 50  # as select_k_bench
        cub[(r, n, k)], raw = cub_case(peer, ("batched", r, n, k), reps, errors)
        cub_runs.append(raw)

    results = []
    torch_cache = {}
    groups = {}
    for (group, r, n, k, algo, dist) in cases:
        groups[(r, n, k, algo, dist)] = group
    for rec in spira_cases:
        key = (rec["rows"], rec["length"], rec["k"], rec["algo"], rec["dist"])
        rec["group"] = "hitrate" if rec["max_iter"] > 0 else groups.get(key, "other")
        rec["floor_ms"] = rec["bytes"] / (gbps * 1e6)
        rec["floor_fraction"] = rec["floor_ms"] / rec["ms"]
        if rec["max_iter"] == 0 and not args.no_torch:
            tkey = (rec["rows"], rec["length"], rec["k"], rec["dist"])
            if tkey not in torch_cache:
                try:
                    torch_cache[tkey] = torch_topk_ms(*tkey)
                except Exception as e:  # report, do not hide
                    torch_cache[tkey] = None
                    errors.append({"kind": "torch_error", "case": str(tkey), "what": str(e)})
            rec["torch_ms"] = torch_cache[tkey]
            rec["ratio_to_torch"] = (rec["torch_ms"] / rec["ms"]) if rec["torch_ms"] else None
        if rec["group"] == "peers" and peer:
            rec.update(cub[(rec["rows"], rec["length"], rec["k"])])
            rec["like_cub_ms"] = like_cub.get((rec["rows"], rec["length"], rec["k"]))
            rec["ratio_to_cub"] = (rec["cub_ms"] / rec["like_cub_ms"]
                                   if rec["cub_ms"] and rec["like_cub_ms"] else None)
        results.append(rec)

    csr_graphs = []
    if manifest is not None:
        use_torch = not args.no_torch
        if use_torch:
            try:
                importlib.import_module("torch")
            except Exception as e:
                use_torch = False
                errors.append({"kind": "torch_error", "case": "csr graphs", "what": str(e)})
        csr_records = [r for r in records if r["kind"] == "select_k_csr"]
        csr_graphs = csr_graph_results(manifest, csr_records, gbps, use_torch, errors)

    device, torch_version = torch_device_and_version()
    doc = {
        "date": datetime.date.today().isoformat(),
        "device": device,
        "torch": torch_version,
        "copy_gbps": gbps,
        "dtype": "float32",
        "order": "largest",
        "indices": "int64",
        "torch_call": "torch.topk(x, k, dim=1, largest=True, sorted=False)",
        "results": results,
        "peers_cells": peer_cells,
        "cub_peer": cub_info,
        "cub_note": cub_note,
        "cub_call": CUB_CALL,
        "like_cub": LIKE_CUB,
        "cub_timing": CUB_TIMING,
        "cub_runs": cub_runs,
        "csr_graph_definition": manifest["definition"] if manifest else None,
        "csr_graph_generation": None if manifest is None else {
            "seconds": manifest["seconds"], "read_seconds": manifest.get("read_seconds"),
            "workers": manifest["workers"], "max_entries": manifest["max_entries"]},
        "csr_graph_torch_call": "torch.topk(x, k, dim=1, largest=False, sorted=False), x: rows x "
                                "max(max_degree, k) float32 padded with +inf",
        "csr_graphs": csr_graphs,
        "errors": errors,
    }
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, "select_k-%s.json" % doc["date"])
    with open(path, "w") as f:
        json.dump(doc, f, indent=1)
    print("wrote", path)
    print("copy bandwidth %.0f GB/s" % gbps)
    print("CUB: %s" % (cub_note or json.dumps(cub_info)))
    for rec in results:
        print("%-11s rows=%-8d n=%-7d k=%-6d %-13s %-8s it=%-2d spira %9.4f ms  torch %s  floor %.3f%s%s" % (
            rec["group"], rec["rows"], rec["length"], rec["k"], rec["resolved_algo"], rec["dist"],
            rec["max_iter"], rec["ms"],
            ("%9.4f ms" % rec["torch_ms"]) if rec.get("torch_ms") else "    -    ",
            rec["floor_fraction"],
            ("  hit %.4f" % rec["hit_rate"]) if rec["max_iter"] > 0 else "",
            ("  cub %s" % (("%9.4f ms" % rec["cub_ms"]) if rec["cub_ms"] else "-"))
            if "cub_ms" in rec else ""))
    for rec in csr_graphs:
        print("csr_graph   %-24s rows=%-7d nnz=%-10d maxdeg=%-6d k=%-4d %-13s spira %s  torch %s  "
              "floor %s  check %s%s" % (
                  rec["dataset"], rec["rows"], rec["nnz"], rec["max_degree"], rec["k"],
                  rec.get("resolved_algo", "-"),
                  ("%9.4f ms" % rec["ms"]) if rec.get("ms") else "    -    ",
                  ("%9.4f ms" % rec["torch_ms"]) if rec.get("torch_ms") else "    -    ",
                  ("%.3f" % rec["floor_fraction"]) if rec.get("floor_fraction") else "-",
                  rec["check"], (" (%s)" % rec["check_detail"]) if rec["check_detail"] else ""))
        if rec["torch_note"]:
            print("            torch %s" % rec["torch_note"])
    for e in errors:
        print("ERROR", e)
    failed = [r for r in csr_graphs if r["check"] in ("fail", "error")]
    graph_errors = [e for e in errors if e.get("kind") == "graph_error"]
    if failed or graph_errors:
        print("select_k: %d CSR graph case(s) failed the check or did not run, %d graph(s) not "
              "built" % (len(failed), len(graph_errors)))
        sys.exit(1)


if __name__ == "__main__":
    main()
