"""Table of the A/B in this folder: base (the commit before) and new builds of select_k_bench,
three alternating rounds (ab.jsonl), medians; CUB from cub.jsonl (same run, same card)."""
import collections
import json
import os
import statistics
import sys
dd=sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
d=collections.defaultdict(lambda: collections.defaultdict(list))
for l in open(dd+'/ab.jsonl'):
    r=json.loads(l)
    key=(r['rows'],r['length'],r['k'],r['resident'],r['index'])
    d[key][r['build']].append(r['ms'])
cub={}
for l in open(dd+'/cub.jsonl'):
    r=json.loads(l); cub[(r['rows'],r['len'],r['k'])]=r['median_ms']
print("| rows | length | k | timing | base ms | new ms | new / base (per round) | CUB ms | CUB / new |")
print("|---:|---:|---:|---|---:|---:|---|---:|---:|")
for key,v in d.items():
    b=statistics.median(v['base']); n=statistics.median(v['gpu'])
    per=" ".join("%.2f"%(x/y) for x,y in zip(v['gpu'],v['base']))
    c=cub.get(key[:3]) if key[3] or key[1]==2048 else None
    print("| %d | %d | %d | %s | %.4f | %.4f | %.2f (%s) | %s | %s |"%(key[0],key[1],key[2],("resident " if key[3] else "rotated ")+key[4],b,n,n/b,per, "%.4f"%c if c else "-", "%.2f"%(c/n) if c else "-"))
