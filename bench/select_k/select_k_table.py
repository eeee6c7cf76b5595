#!/usr/bin/env python3
"""Regenerates the benchmark tables of docs/bench-select.md from a bench/results/select_k-*.json file
(written by bench/select_k/select_k.py). Never edit the tables by hand.

    python3 bench/select_k/select_k_table.py bench/results/select_k-YYYY-MM-DD.json
        [docs/bench-select.md] [--graphs-from bench/results/select_k-OLDER.json]

--graphs-from takes the CSR graph table from an older run (labelled with its file and date) when
the newer run did not build the graphs; its graph-build error is then left out.

Where the run timed CUB's top-k (select_k.py --cub), the "peers" group (the issue's grid) gets its
own section: spira against CUB and torch.topk per cell, and a count of the cells where spira is
faster than both that names every cell where it is not.
"""
import json
import sys

BEGIN = "<!-- select_k-bench:begin -->"
END = "<!-- select_k-bench:end -->"


def fmt_ms(x):
    return "-" if x is None else ("%.4f" % x if x < 1 else "%.2f" % x)


def ratio(peer_ms, ms):
    return "%.2f" % (peer_ms / ms) if peer_ms and ms else "-"


def table(rows, with_torch=True):
    head = "| rows | length | k | algo | dist | spira ms | torch.topk ms | torch / spira | floor ms | floor / spira |"
    sep = "|---:|---:|---:|---|---|---:|---:|---:|---:|---:|"
    out = [head, sep]
    for r in rows:
        t = r.get("torch_ms")
        out.append("| %d | %d | %d | %s | %s | %s | %s | %s | %s | %.2f |" % (
            r["rows"], r["length"], r["k"], r["resolved_algo"], r["dist"], fmt_ms(r["ms"]),
            fmt_ms(t), "%.2f" % (t / r["ms"]) if t else "-", fmt_ms(r["floor_ms"]),
            r["floor_fraction"]))
    return out


def peer_summary(cells, peers, what):
    """Counts the cells where spira is faster than every one of `peers` and names each cell where it
    is not, with the reason (a peer as fast or faster, or a time missing). cells: (shape, spira ms,
    {peer: ms or None}), where spira ms may be a dict {peer: spira ms timed as that peer is}; a peer
    without a time in any cell (not run) is left out, and said so. Also used by
    select_vector_table.py."""
    absent = [p for p in peers if not any(times.get(p) for _, _, times in cells)]
    peers = [p for p in peers if p not in absent]
    note = ["%s: no time in this run." % " and ".join(absent), ""] if absent else []
    if not peers:
        return note
    misses = []
    for shape, spira, times in cells:
        why = []
        for p in peers:
            t = times.get(p)
            ms = spira.get(p) if isinstance(spira, dict) else spira
            if not ms:
                why.append("no spira time" + (" timed as %s is" % p if isinstance(spira, dict)
                                              else ""))
            elif not t:
                why.append("no %s time" % p)
            elif t <= ms:
                why.append("%s %s ms against spira %s ms (%s / spira %.3f)"
                           % (p, fmt_ms(t), fmt_ms(ms), p, t / ms))
        if why:
            misses.append("- %s: %s" % (shape, "; ".join(why)))
    line = "spira is faster than %s in %d of %d %s" % (" and ".join(peers), len(cells) - len(misses),
                                                       len(cells), what)
    return note + [line + (". Not faster in %d:" % len(misses) if misses else "."), ""] + \
        (misses + [""] if misses else [])


def peers_section(d):
    """The issue's grid: spira (auto) against CUB's batched top-k and torch.topk, cell by cell."""
    cells = d.get("peers_cells")
    if not cells:
        return []
    by = {(r["rows"], r["length"], r["k"]): r for r in d["results"] if r["group"] == "peers"}
    info = d.get("cub_peer")
    cub = info is not None
    if cub:
        peer = "CUB (%s, CUB_VERSION %s): %s; %s." % (
            info.get("cccl", "-"), info.get("cub_version", "-"), d["cub_call"], d["cub_timing"])
    else:
        peer = "%s." % d.get("cub_note")
    # Runs since spira is also timed as the harness times CUB (d["like_cub"]) compare CUB with that
    # time; earlier runs compared it with the rotated int64 time.
    like = cub and "like_cub" in d
    lines = ["#### Against CUB and torch.topk (the issue's grid)", "",
             "spira: `auto`, N(0,1) float32 keys, inputs rotated as above, int64 indices; %s"
             "torch: `%s` on the same shapes, inputs rotated, against spira's rotated time. %s"
             % ("\"spira ms as CUB\": %s, against CUB's time. " % d["like_cub"] if like else "",
                d["torch_call"], peer), ""]
    heads = (["rows", "length", "k", "algo", "spira ms"] + ["spira ms as CUB"] * like +
             ["CUB ms"] * cub + ["torch.topk ms"] + ["CUB / spira"] * cub + ["torch / spira"] +
             ["CUB check"] * cub)
    lines += ["| " + " | ".join(heads) + " |",
              "|" + "|".join("---" if h in ("algo", "CUB check") else "---:" for h in heads) + "|"]
    summary, failed = [], []
    for (rows, length, k) in cells:
        r = by.get((rows, length, k), {})
        ms, c, t = r.get("ms"), r.get("cub_ms"), r.get("torch_ms")
        ms_cub = r.get("like_cub_ms") if like else ms
        check = r.get("cub_check") or ("error" if r.get("cub_error") else "-")
        cols = ([str(rows), str(length), str(k), r.get("resolved_algo", "-"), fmt_ms(ms)] +
                [fmt_ms(ms_cub)] * like + [fmt_ms(c)] * cub + [fmt_ms(t)] +
                [ratio(c, ms_cub)] * cub + [ratio(t, ms)] + [check] * cub)
        lines.append("| " + " | ".join(cols) + " |")
        shape = "%d x %d, k = %d" % (rows, length, k)
        summary.append((shape, {"CUB": ms_cub, "torch.topk": ms}, {"CUB": c, "torch.topk": t}))
        if cub and (r.get("cub_error") or r.get("cub_check") not in (None, "pass")):
            failed.append("%s (%s)" % (shape, r.get("cub_error") or "check " + r["cub_check"]))
    lines.append("")
    lines += peer_summary(summary, ["CUB", "torch.topk"] if cub else ["torch.topk"], "cells")
    if failed:
        lines += ["CUB failed or failed its own check on: %s." % "; ".join(failed), ""]
    return lines


def csr_graph_section(d):
    """The CSR-rows group: caption (the graphs' definition, the torch call, the floor) and table."""
    recs = d.get("csr_graphs") or []
    if not recs:
        return []
    gen = d.get("csr_graph_generation") or {}
    lines = ["#### CSR rows of the datasets' distance graphs", "",
             "Graph of a dataset A (rows = samples): %s (`bench/select_k/select_k_graphs.py`, "
             "scipy on the CPU in %.1f s, 0 when reused from its cache). Rows: the query rows of "
             "the graph (\"R of N\" where it was cut). spira: the CSR overload of `select_k`, k "
             "smallest, `auto`, unsorted, rows x k values and int32 column indices. torch: `%s` "
             "(padded shape in the last column; the padding itself is not timed). Floor: (values + "
             "column indices + row pointers read once, k values + int32 indices per row written "
             "once) / copy bandwidth. Check: spira's rows equal, as sets, the exact top-k with the "
             "tie rule (smaller column wins; short rows padded -1 / +inf), from a stable sort of "
             "the padded rows."
             % (d.get("csr_graph_definition") or "-", gen.get("seconds") or 0,
                d.get("csr_graph_torch_call", "torch.topk")), "",
             "| dataset | rows | nnz | max degree | k | algo | spira ms | torch.topk ms | "
             "torch / spira | floor ms | floor / spira | check | torch padded shape |",
             "|---|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---|---|"]
    notes = []
    for r in recs:
        rows = ("%d of %d" % (r["rows"], r["a_rows"])) if r.get("truncated") else "%d" % r["rows"]
        t = r.get("torch_ms")
        ms = r.get("ms")
        lines.append("| %s | %s | %d | %d | %d | %s | %s | %s | %s | %s | %s | %s | %d x %d |" % (
            r["dataset"], rows, r["nnz"], r["max_degree"], r["k"], r.get("resolved_algo", "-"),
            fmt_ms(ms), fmt_ms(t) if t or not r.get("torch_note") else "not run",
            "%.2f" % (t / ms) if t and ms else "-", fmt_ms(r.get("floor_ms")),
            "%.3f" % r["floor_fraction"] if r.get("floor_fraction") is not None else "-",
            r["check"], r["padded_shape"][0], r["padded_shape"][1]))
        if r.get("torch_note"):
            notes.append("- %s, k = %d: torch %s" % (r["dataset"], r["k"], r["torch_note"]))
        if r.get("check_detail"):
            notes.append("- %s, k = %d: check %s: %s" % (r["dataset"], r["k"], r["check"],
                                                          r["check_detail"]))
    lines.append("")
    if notes:
        lines += notes + [""]
    return lines


def main():
    args = sys.argv[1:]
    graphs_from = None
    if "--graphs-from" in args:
        i = args.index("--graphs-from")
        graphs_from = args[i + 1]
        del args[i:i + 2]
    src = args[0]
    doc_path = args[1] if len(args) > 1 else "docs/bench-select.md"
    d = json.load(open(src))
    res = d["results"]
    lines = [BEGIN, "",
             "Generated by `bench/select_k/select_k_table.py %s` (do not edit by hand). "
             "Device: %s, measured %s; torch %s; copy bandwidth %.0f GB/s (read + write), float32 "
             "input, largest, int64 indices, unsorted output; torch call: `%s`. Median of timed "
             "runs (CUDA events), inputs rotated so that they do not sit in L2."
             % (src + (" --graphs-from " + graphs_from if graphs_from else ""), d["device"], d["date"], d["torch"], d["copy_gbps"], d["torch_call"]), ""]
    lines += peers_section(d)
    for group, title in (("rtopk", "RTop-K grid"), ("llm", "LLM-style batches (length 131072)"),
                         ("crossover", "binary_search against radix (data for `auto`)"),
                         ("adversarial", "Adversarial distributions (RadiK section 4), radix")):
        rows = [r for r in res if r["group"] == group]
        if rows:
            lines += ["#### " + title, ""] + table(rows) + [""]
    if graphs_from:
        g = json.load(open(graphs_from))
        lines += ["The CSR graph table below is from `%s` (measured %s, an earlier build): this "
                  "run did not build the graphs." % (graphs_from, g["date"]), ""]
        lines += csr_graph_section(g)
        d["errors"] = [e for e in d.get("errors") or [] if e.get("kind") != "graph_error"]
    else:
        lines += csr_graph_section(d)
    hit = [r for r in res if r["group"] == "hitrate"]
    if hit:
        lines += ["#### Approximate early stop (`max_iter`): hit rate, as RTop-K's Table 2", "",
                  "Hit rate: the fraction of the selected elements that are in the exact top-k "
                  "(uniform data, rows = %d)." % hit[0]["rows"], "",
                  "| length | k | max_iter | hit rate | ms |", "|---:|---:|---:|---:|---:|"]
        for r in hit:
            lines.append("| %d | %d | %d | %.4f | %s |" % (r["length"], r["k"], r["max_iter"],
                                                         r["hit_rate"], fmt_ms(r["ms"])))
        lines.append("")
    if d.get("errors"):
        lines += ["Errors reported by the run:", ""] + ["- `%s`" % json.dumps(e) for e in d["errors"]] + [""]
    lines.append(END)
    text = open(doc_path).read()
    a = text.index(BEGIN)
    b = text.index(END) + len(END)
    open(doc_path, "w").write(text[:a] + "\n".join(lines) + text[b:])


if __name__ == "__main__":
    main()
