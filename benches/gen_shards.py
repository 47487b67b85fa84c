# Makes N Even Steven games in 4 shard folders (bigN/shard-K) from a
# 1,000-game run in base/ (referee tournament tournaments/evensteven.toml
# --games 1000 --out base), for docs/PERFORMANCE.md section 10.
import json, sys, os
N = int(sys.argv[1]); S = 4
base = [json.loads(l) for l in open('base/records.jsonl')]
info = json.load(open('base/run.json'))
info['games'] = N
outs = []
for k in range(S):
    d = f'big{N}/shard-{k+1}'; os.makedirs(d, exist_ok=True)
    i2 = dict(info); i2['shard'] = [k+1, S]
    json.dump(i2, open(f'{d}/run.json','w'))
    outs.append(open(f'{d}/records.jsonl','w'))
for rep in range(N // 1000):
    for r in base:
        idx = rep*1000 + r['index']
        r2 = dict(r); r2['index'] = idx
        outs[(idx-1) % S].write(json.dumps(r2, separators=(',',':')) + '\n')
