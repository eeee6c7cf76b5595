# ratios of the working-tree build (w) to HEAD (v0) per case and round, from cmp_k.txt / cmp_v.txt
import collections, sys
for f in sys.argv[1:]:
    t = collections.defaultdict(lambda: collections.defaultdict(list))
    for l in open(f):
        p = l.split()
        if len(p) < 5 or p[-1] == '-1.0000': continue
        t[' '.join(p[1:-1])][p[0]].append(float(p[-1]))
    print('==', f)
    for key, d in t.items():
        if 'v0' in d and 'w' in d:
            r = [w / v for w, v in zip(d['w'], d['v0'])]
            print('  %-30s v0 %s  w %s  w/v0 %s' % (key, '/'.join('%.4f' % x for x in d['v0']),
                  '/'.join('%.4f' % x for x in d['w']), '/'.join('%.2f' % x for x in r)))
