"""Cosine against manhattan per build and round from ab.jsonl (bench/before_after.sh, knn-resident):
host in/out and device in/out medians, ms. Run: python3 cosine_vs_manhattan.py [ab.jsonl]"""
import json
import sys

rows = [json.loads(l) for l in open(sys.argv[1] if len(sys.argv) > 1 else 'ab.jsonl') if l.startswith('{')]
t = {}
for r in rows:
    if r.get('median_ms') is not None:
        t[(r['dataset'], r['build'], r['round'], r['metric'])] = (r['median_ms'], r.get('resident_median_ms'))
print('| dataset | build | round | cosine host / device | manhattan host / device | cosine / manhattan (device) |')
print('| --- | --- | ---: | ---: | ---: | ---: |')
for (d, b, rnd, m), (h, dv) in sorted(t.items()):
    if m != 'cosine' or (d, b, rnd, 'manhattan') not in t:
        continue
    mh, md = t[(d, b, rnd, 'manhattan')]
    print(f'| {d} | {b} | {rnd} | {h:.3f} / {dv:.3f} | {mh:.3f} / {md:.3f} | {dv / md:.3f} |')
