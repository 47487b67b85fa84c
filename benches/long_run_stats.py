# Games per second, slowest move and RSS at the start and end of a long
# run (docs/PERFORMANCE.md section 10.1): long_run_stats.py OUT/records.jsonl,
# with /tmp/long.rss sampled as that section shows.
import json, sys, datetime
recs = [json.loads(l) for l in open(sys.argv[1])]
def t(r): return datetime.datetime.fromisoformat(r['time'].replace('Z','+00:00')).timestamp()
def window(rs):
    dt = t(rs[-1]) - t(rs[0])
    slow = max(max(x.get('slowest_micros') or 0 for x in r['results']) for r in rs)
    p = sorted(max(x.get('slowest_micros') or 0 for x in r['results']) for r in rs)
    return len(rs)/dt if dt else 0, slow, p[len(p)*99//100]
n = len(recs)
for name, rs in [('games 1-1000', recs[:1000]), ('games 9001-10000', recs[9000:10000]), (f'last 1000 ({n-999}-{n})', recs[-1000:])]:
    rate, slow, p99 = window(rs)
    print(f'{name}: {rate:.0f} games/s, slowest move {slow/1000:.1f} ms, p99 of games\' slowest {p99/1000:.2f} ms')
rss = [l.split() for l in open('/tmp/long.rss') if len(l.split())==3]
for at in [1000, 10000, 50000, 90000]:
    best = min(rss, key=lambda x: abs(int(x[2])-at))
    print(f'RSS near game {best[2]}: {int(best[1])/1024:.1f} MB')
