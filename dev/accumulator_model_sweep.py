#!/usr/bin/env python3
"""Sweeps the FP8 fast-accumulator model (docs/accumulation-model.md) against FACTS.md's H200
error table. Prints the ratios model/H200 per K for each column.
Usage: accumulator_model_sweep.py BITS[,BITS] GROUPS[,GROUPS] trunc|nearest[,..] N_K
(N_K: how many of K = 256, 1024, 4096, 65536, 262144 to run). Needs numpy and ml_dtypes.
"""
import itertools
import sys

import ml_dtypes
import numpy as np
rng=np.random.default_rng(0)
def q(x, bits, mode):
    # round x to 'bits' fraction bits at its own exponent
    e=np.floor(np.log2(np.abs(np.where(x==0,1,x))))
    quantum=np.exp2(e-bits)
    y=x/quantum
    y=np.trunc(y) if mode=='trunc' else np.round(y)
    return np.where(x==0,0,y*quantum)
def group_add(acc, prods, bits, mode):
    # prods: (G, R)
    allt=np.vstack([acc[None,:],prods])
    mx=np.max(np.abs(allt),axis=0)
    e=np.floor(np.log2(np.where(mx==0,1,mx)))
    quantum=np.exp2(e-bits)
    t=allt/quantum
    t=np.trunc(t) if mode=='trunc' else np.round(t)
    s=t.sum(axis=0)*quantum
    return q(s,bits,mode)
def run(K, dist, bits, G, mode, promoted, R=1024):
    if dist=='sym': a=rng.uniform(-4,4,(R,K)); b=rng.uniform(-4,4,(R,K))
    else: a=rng.uniform(0,4,(R,K)); b=rng.uniform(0,4,(R,K))
    a=a.astype(ml_dtypes.float8_e4m3fn).astype(np.float64); b=b.astype(ml_dtypes.float8_e4m3fn).astype(np.float64)
    p=a*b
    ref=p.sum(axis=1)
    acc=np.zeros(R); out=np.zeros(R)
    for k0 in range(0,K,G):
        acc=group_add(acc,p[:,k0:k0+G].T,bits,mode)
        if promoted and (k0+G)%128==0:
            out=(out+acc).astype(np.float32).astype(np.float64); acc=np.zeros(R)
    if promoted: out=out+acc
    else: out=acc
    return np.linalg.norm(out-ref)/np.linalg.norm(ref)
facts={('sym',False):[1.8e-4,4.7e-4,1.2e-3,1.9e-3,3.7e-3],('pos',False):[1.7e-3,1.3e-2,6.6e-2,1.3e-1,3.0e-1],
('sym',True):[1.1e-4]*5,('pos',True):[5.0e-4]*5}
Ks=[256,1024,4096,65536,262144]
for bits,G,mode in itertools.product([int(x) for x in sys.argv[1].split(',')],[int(x) for x in sys.argv[2].split(',')],sys.argv[3].split(',')):
    line=f'bits={bits} G={G} {mode}: '
    for (dist,prom),ref in facts.items():
        errs=[run(K,dist,bits,G,mode,prom,R=256 if K>5000 else 1024) for K in Ks[:int(sys.argv[4])]]
        line+=f'{dist}{"P" if prom else "F"} '+' '.join(f'{e/r:.2f}' for e,r in zip(errs,ref))+' | '
    print(line,flush=True)
