#!/usr/bin/env python3
"""The table of bench/before_after.sh from its JSON lines: per suite and case, the median and the
fastest time of the base and the current build (device in/out where the line has it), and
current / base for both (the fastest is the steadier figure when the host adds jitter). A case is identified by the fields of its lines that
are neither timings nor bookkeeping."""
import json
import sys

TIMING = {"median_ms", "min_ms", "resident_median_ms", "resident_min_ms", "ms", "warmup_ms",
          "timed_calls", "max_diff_vs_first", "bytes", "hit_rate", "seconds", "gpu_same_rows_ms"}
BOOKKEEPING = {"build", "tool", "error", "skipped", "first", "load_s", "peak_device_bytes",
               "resident_peak_device_bytes", "device_free_bytes", "budget_bytes",
               "resident_input_bytes", "resident_error", "resident_max_dist_diff"}


def case_key(r):
    return tuple(sorted((k, str(v)) for k, v in r.items()
                        if k not in TIMING and k not in BOOKKEEPING
                        and not isinstance(v, (float, list, dict))))


def main(path):
    rows = [json.loads(line) for line in open(path) if line.strip()]
    table = {}
    for r in rows:
        if r.get("kind") == "error" or r.get("error"):
            print(f"error: {r}")
            continue
        if "machine" in r and "case" not in r:  # a line describing the run, not a case
            continue
        table.setdefault(case_key(r), {})[r["build"]] = r
    print(f"{'suite':9s} {'case':70s} {'base med':>9s} {'cur med':>9s} {'ratio':>6s}"
          f" {'base min':>9s} {'cur min':>9s} {'ratio':>6s}")
    for key, v in table.items():
        d = dict(key)
        suite = d.pop("suite", "?")
        label = " ".join(f"{k}={val}" for k, val in d.items()
                         if k in ("dataset", "case", "metric", "query_tile", "rows", "length", "n",
                                  "k", "algo", "dist", "wait_policy", "round")
                         and not (k == "rows" and suite != "select_k"))[:70]
        b, c = v.get("base"), v.get("current")
        cells = []
        for field in ("median_ms", "min_ms"):
            def get(r):
                if r is None:
                    return None
                # device in/out timings where the line has them (bench_knn --resident); spira's
                # own beside a peer's (bench_graphblas_gpu)
                own = r.get("spira_" + field.replace("median_", ""))
                return r.get("resident_" + field, r.get(field, r.get("ms", own)))
            bv, cv = get(b), get(c)
            cells.append(f"{bv:9.3f}" if bv is not None else f"{'-':>9s}")
            cells.append(f"{cv:9.3f}" if cv is not None else f"{'-':>9s}")
            cells.append(f"{cv / bv:6.3f}" if bv and cv is not None else f"{'-':>6s}")
        print(f"{suite:9s} {label:70s} " + " ".join(cells))


if __name__ == "__main__":
    main(sys.argv[1])
