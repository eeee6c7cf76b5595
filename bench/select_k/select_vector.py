#!/usr/bin/env python3
"""Top-k of one long vector: spira::select_k (delegate, radix, and auto: the one it picks, timed
again), a full CUB radix sort, torch.topk and CUB's top-k side by side, in one run on one GPU, with
the device-to-device copy bandwidth measured in the same run.

    python3 bench/select_k/select_vector.py --bench BUILD/bench/select_vector_bench \\
        --out bench/results [--quick] [--cub PATH/cub_topk_peer]

Writes <out>/select_vector-<YYYY-MM-DD>.json; bench/select_k/select_vector_table.py turns it into
the tables of docs/bench-select.md. The memory floor of a case is one read of the input (n float32
values) over the measured copy bandwidth (bytes read + written per second), as in the issue.

CUB's top-k: cub::DeviceTopK::MinPairs through the harness --cub names (default $SPIRA_CUB_PEER;
select_k.py describes it), one `cub_topk_peer vector N K` process per (n, k) of the normal
distribution (the harness draws N(0,1) keys); its time is attached to spira's normal results
(cub_ms, ratio_to_cub), its JSON lines kept in "cub_runs", a failure recorded as an error.
"""
import argparse
import datetime
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench", "common"))  # gpu_info.py

from gpu_info import torch_device_and_version
from cub_peer import CUB_TIMING, LIKE_CUB, cub_case, cub_peer

DISTS = ("uniform", "normal", "adversarial")
CUB_CALL = ("cub::DeviceTopK::MinPairs through `cub_topk_peer vector N K`: the k smallest (spira "
            "and torch: the largest; N(0,1) keys are symmetric), int32 positions, "
            "unsorted output, ties not deterministic; the harness checks the output against a "
            "sort of the input on the device")


def grid(quick):
    ns = [1 << 20, 1 << 24, 1 << 28] if quick else [1 << e for e in (20, 22, 24, 26, 28, 30)]
    ks = [16, 256, 4096, 1 << 16, 1 << 18]
    for dist in DISTS:
        for n in ns:
            for k in ks:
                if k <= n:
                    yield n, k, dist


def torch_input(n, dist, copies):
    import torch
    g = torch.Generator(device="cuda").manual_seed(7)
    xs = []
    for _ in range(copies):
        if dist == "normal":
            xs.append(torch.randn(n, device="cuda", generator=g))
        elif dist == "adversarial":  # as bench/select_k/select_vector.cu's fill_kernel
            low = torch.randint(0, 1 << 15, (n,), device="cuda", generator=g, dtype=torch.int32)
            x = (low + 0x3F800000).view(torch.float32)
            sprinkle = torch.rand(n, device="cuda", generator=g)
            mask = torch.randint(0, 4096, (n,), device="cuda", generator=g) == 0
            xs.append(torch.where(mask, sprinkle, x))
            del low, sprinkle, mask
        else:
            xs.append(torch.rand(n, device="cuda", generator=g))
    return xs


def torch_topk_ms(xs, k, reps):
    import torch
    for i in range(3):
        torch.topk(xs[i % len(xs)], k, largest=True, sorted=False)
    torch.cuda.synchronize()
    times = []
    for i in range(reps):
        a = torch.cuda.Event(enable_timing=True)
        b = torch.cuda.Event(enable_timing=True)
        a.record()
        torch.topk(xs[i % len(xs)], k, largest=True, sorted=False)
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b))
    times.sort()
    return times[len(times) // 2]


def torch_times(cases, errors):
    """torch.topk for every (n, k, dist), inputs generated once per (n, dist)."""
    out = {}
    try:
        import torch
    except Exception as e:
        errors.append({"kind": "torch_error", "case": "import", "what": str(e)})
        return out
    by_input = {}
    for (n, k, dist) in cases:
        by_input.setdefault((n, dist), []).append(k)
    for (n, dist), ks in by_input.items():
        copies = max(1, min(16, (2 * 60 * 2**20 + 4 * n - 1) // (4 * n)))
        try:
            xs = torch_input(n, dist, copies)
            for k in ks:
                out[(n, k, dist)] = torch_topk_ms(xs, k, 10 if n >= 1 << 28 else 30)
        except Exception as e:  # report, do not hide
            errors.append({"kind": "torch_error", "case": "n=%d %s" % (n, dist), "what": str(e)})
        xs = None
        torch.cuda.empty_cache()
    return out


def run_bench(bench, lines):
    proc = subprocess.run([bench], input="\n".join(lines) + "\n", capture_output=True, text=True)
    sys.stderr.write(proc.stderr)
    return [json.loads(l) for l in proc.stdout.splitlines() if l.startswith("{")]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bench", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--no-torch", action="store_true")
    ap.add_argument("--cub", default=os.environ.get("SPIRA_CUB_PEER"),
                    help="the cub_topk_peer harness (default: $SPIRA_CUB_PEER; none: no CUB)")
    args = ap.parse_args()

    errors = []
    peer, cub_info, cub_note = cub_peer(args.cub, errors)
    cases = list(grid(args.quick))
    lines = ["copy"]
    sorts = sorted({(n, dist) for (n, _, dist) in cases})
    for (n, k, dist) in cases:
        for algo in ("delegate", "radix", "auto"):
            lines.append("select %d %d %s %s" % (n, k, algo, dist))
        if peer and dist == "normal":  # auto, timed as the harness times CUB (select_k.py: LIKE_CUB)
            lines.append("select %d %d auto %s resident int32" % (n, k, dist))
    lines += ["sort %d %s" % s for s in sorts]
    records = run_bench(args.bench, lines)
    copy = next(r for r in records if r["kind"] == "copy")
    gbps = copy["gbps"]
    errors += [r for r in records if r["kind"] == "error"]
    sort_ms = {(r["n"], r["dist"]): r["ms"] for r in records if r["kind"] == "sort"}
    torch_ms = {} if args.no_torch else torch_times(cases, errors)
    cub, cub_runs = {}, []  # (n, k) of the normal cases -> CUB's fields; the harness's JSON lines
    cub_cells = [(n, k) for (n, k, dist) in cases if dist == "normal"] if peer else []
    for (n, k) in cub_cells:
        reps = 10 if n >= 1 << 28 else 30  # as select_vector_bench
        cub[(n, k)], raw = cub_case(peer, ("vector", n, k), reps, errors)
        cub_runs.append(raw)

    like_cub = {(r["n"], r["k"]): r["ms"] for r in records
                if r["kind"] == "select" and r.get("resident")}
    results = []
    for r in records:
        if r["kind"] != "select" or r.get("resident"):
            continue
        r["floor_ms"] = r["bytes"] / (gbps * 1e6)
        r["floor_fraction"] = r["floor_ms"] / r["ms"]
        r["times_floor"] = r["ms"] / r["floor_ms"]
        r["torch_ms"] = torch_ms.get((r["n"], r["k"], r["dist"]))
        r["ratio_to_torch"] = r["torch_ms"] / r["ms"] if r["torch_ms"] else None
        r["cub_sort_ms"] = sort_ms.get((r["n"], r["dist"]))
        r["ratio_to_cub_sort"] = r["cub_sort_ms"] / r["ms"] if r["cub_sort_ms"] else None
        if r["dist"] == "normal" and peer:
            r.update(cub[(r["n"], r["k"])])
            r["like_cub_ms"] = like_cub.get((r["n"], r["k"]))
            r["ratio_to_cub"] = (r["cub_ms"] / r["like_cub_ms"]
                                 if r["cub_ms"] and r["like_cub_ms"] else None)
        results.append(r)

    device, torch_version = torch_device_and_version()
    doc = {
        "date": datetime.date.today().isoformat(),
        "device": device,
        "torch": torch_version,
        "copy_gbps": gbps,
        "dtype": "float32",
        "order": "largest",
        "indices": "int64",
        "torch_call": "torch.topk(x, k, largest=True, sorted=False) on a 1-D tensor",
        "cub_sort": "cub::DeviceRadixSort::SortPairsDescending(float values, int32 positions)",
        "cub_peer": cub_info,
        "cub_note": cub_note,
        "cub_call": CUB_CALL,
        "like_cub": LIKE_CUB,
        "cub_timing": CUB_TIMING,
        "results": results,
        "sorts": [r for r in records if r["kind"] == "sort"],
        "cub_runs": cub_runs,
        "errors": errors,
    }
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, "select_vector-%s.json" % doc["date"])
    with open(path, "w") as f:
        json.dump(doc, f, indent=1)
    print("wrote", path)
    print("copy bandwidth %.0f GB/s" % gbps)
    print("CUB: %s" % (cub_note or json.dumps(cub_info)))
    for r in results:
        print("n=2^%-2d k=%-7d %-11s %-4s %-8s a=%-6d spira %9.4f ms  x floor %6.2f  torch %s  "
              "sort %s%s" % (
                  r["n"].bit_length() - 1, r["k"], r["dist"], r["algo"][:4], r["resolved_algo"],
                  r["subrange"], r["ms"], r["times_floor"],
                  ("%9.4f" % r["torch_ms"]) if r["torch_ms"] else "    -    ",
                  ("%9.4f" % r["cub_sort_ms"]) if r["cub_sort_ms"] else "-",
                  ("  cub %s" % (("%9.4f" % r["cub_ms"]) if r["cub_ms"] else "-"))
                  if "cub_ms" in r else ""))
    for e in errors:
        print("ERROR", e)


if __name__ == "__main__":
    main()
