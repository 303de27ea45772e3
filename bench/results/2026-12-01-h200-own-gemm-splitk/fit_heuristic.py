# Fits the constants of ChooseBlockScaledGemmTile's cost model (src/cuda/kernels/
# block_scaled_gemm.cu) to the tile sweeps in this folder: for each shape, the loss of the tile the
# model picks against the fastest tile measured. Run: python3 fit_heuristic.py
import csv, math, itertools, os, re
HERE = os.path.dirname(os.path.abspath(__file__))
rows=[]
# run 4 csv (small M, splits)
for r in csv.DictReader(open(os.path.join(HERE, 'run4-split-k-tile-sweep.csv'))):
    if 'own' not in r['config'] or not r['graph_ms']: continue
    tile=r['config'].split()[-1]
    rows.append((int(r['m']),int(r['n']),int(r['k']),tile,float(r['graph_ms'])))
# run 2 md (no split, includes 4096)
for line in open(os.path.join(HERE, 'run2-pipelined-tile-sweep.md')):
    f=[x.strip() for x in line.split('|')]
    if len(f)<14 or 'block-scaled' not in f[13]: continue
    m,n,k=map(int,f[1].split(','))
    if m<=128: continue
    tile=f[13].split()[-1].rstrip(']')
    t=float(f[3]); ms=2*m*n*k/t/1e9
    rows.append((m,n,k,tile,ms))
def parse(t):
    mt=re.match(r'(\d+)x(\d+)(c\d+)?(s\d+)?',t); return int(mt[1]),int(mt[2]),int(mt[4][1:]) if mt[4] else 1
def cost(m,n,k,tile,P):
    bm,bn,s=tile; sm=132
    kb=math.ceil(k/128); s=min(s,kb); bps=math.ceil(kb/s); s=math.ceil(kb/bps)
    tiles=math.ceil(m/bm)*math.ceil(n/bn); units=tiles*s; waves=math.ceil(units/sm)
    bb=(bm+bn)*128; mma=2*128*bm*bn/8192
    per=max(mma,bb/P['smbw'])+P['hs']
    smt=waves*bps*per; l2=units*bps*bb/P['l2']
    red=0 if s==1 else P['rr']*s+2*units*bm*bn*4/P['l2']
    return max(smt,l2)+red
shapes={}
for m,n,k,t,ms in rows: shapes.setdefault((m,n,k),{})[t]=ms
def score(P,verbose=False):
    tot=0
    for sh,d in shapes.items():
        best=min(d.values())
        pick=min(d, key=lambda t: cost(*sh,parse(t),P))
        loss=d[pick]/best
        tot+=math.log(loss)
        if verbose: print(sh, 'pick',pick, 'best',min(d,key=d.get), 'loss %.2f'%loss)
    return tot
best=None
for smbw,l2,hs,rr in itertools.product([16,24,32,48,64],[2500,3000,4000],[0,50,100,200],[0,1000,2000,4000,6000,8000]):
    P=dict(smbw=smbw,l2=l2,hs=hs,rr=rr)
    sc=score(P)
    if best is None or sc<best[0]-1e-9: best=(sc,P)
print('best fit (sum of log losses, constants):', best); score(best[1],True)
P0=dict(smbw=24,l2=3000,hs=50,rr=4000); print('the kernel\'s constants:', score(P0))
