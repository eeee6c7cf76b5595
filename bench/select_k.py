#!/usr/bin/env python3
"""select_k benchmark driver: spira::select_k (bench/select_k.cu) and torch.topk side by side, in
one run on one GPU, with the device-to-device copy bandwidth measured in the same run.

    python3 bench/select_k.py --bench BUILD/select_k_bench --out bench/results [--quick]

Writes <out>/select_k-<YYYY-MM-DD>.json; bench/select_k_table.py turns it into the table of
docs/selection.md. The memory floor of a case is (input read once + values and int64 indices
written once) / measured copy bandwidth (bytes read + written per second).
"""
import argparse
import datetime
import json
import os
import subprocess
import sys


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
    for dist in ("uniform", "normal", "narrow"):
        for k in (50, 4096):
            yield ("adversarial", 16, 131072, k, "radix", dist)


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
    for i in range(3):
        torch.topk(xs[i % copies], k, dim=1, largest=True, sorted=False)
    torch.cuda.synchronize()
    times = []
    for i in range(reps):
        a = torch.cuda.Event(enable_timing=True)
        b = torch.cuda.Event(enable_timing=True)
        a.record()
        torch.topk(xs[i % copies], k, dim=1, largest=True, sorted=False)
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b))
    del xs
    torch.cuda.empty_cache()
    times.sort()
    return times[len(times) // 2]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bench", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--no-torch", action="store_true")
    args = ap.parse_args()

    cases = list(rtopk_grid(args.quick)) + list(llm_batches(args.quick)) + \
        list(crossover(args.quick)) + list(adversarial(args.quick))
    lines = ["copy"]
    lines += ["%d %d %d %s %s" % (r, n, k, algo, dist) for (_, r, n, k, algo, dist) in cases]
    lines += ["hitrate %d %d %d %d" % c for c in hitrate_cases()]
    proc = subprocess.run([args.bench], input="\n".join(lines) + "\n", capture_output=True,
                          text=True)
    sys.stderr.write(proc.stderr)
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "select_k-raw.jsonl"), "w") as f:
        f.write(proc.stdout)
    records = [json.loads(l) for l in proc.stdout.splitlines() if l.startswith("{")]
    copy = next(r for r in records if r["kind"] == "copy")
    gbps = copy["gbps"]
    spira_cases = [r for r in records if r["kind"] == "select_k"]
    errors = [r for r in records if r["kind"] == "error"]

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
        results.append(rec)

    device = ""
    torch_version = ""
    try:
        import torch
        device = torch.cuda.get_device_name()
        torch_version = torch.__version__
    except Exception:
        pass
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
        "errors": errors,
    }
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, "select_k-%s.json" % doc["date"])
    with open(path, "w") as f:
        json.dump(doc, f, indent=1)
    print("wrote", path)
    print("copy bandwidth %.0f GB/s" % gbps)
    for rec in results:
        print("%-11s rows=%-8d n=%-7d k=%-6d %-13s %-8s it=%-2d spira %9.4f ms  torch %s  floor %.3f%s" % (
            rec["group"], rec["rows"], rec["length"], rec["k"], rec["resolved_algo"], rec["dist"],
            rec["max_iter"], rec["ms"],
            ("%9.4f ms" % rec["torch_ms"]) if rec.get("torch_ms") else "    -    ",
            rec["floor_fraction"],
            ("  hit %.4f" % rec["hit_rate"]) if rec["max_iter"] > 0 else ""))
    for e in errors:
        print("ERROR", e)


if __name__ == "__main__":
    main()
