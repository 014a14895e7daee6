"""Power and false positives of UpliftOfRuns' verdict, simulated: two
configurations whose runs spread log-normally by sigma, the second 8 % higher
(power) or the same (false positives), n runs a side; exact Mann-Whitney p <
0.05 and the exact Hodges-Lehmann 95 % interval of the ratio outside +-1 %.
Standard library only: python3 loadgen/stats/testdata/power_simulation.py
"""
import random, math, itertools
from functools import lru_cache
@lru_cache(None)
def udist(n1,n2):
    # counts of U (no ties) via recursion
    # f(u; n1,n2) = f(u-n2; n1-1, n2) + f(u; n1, n2-1)
    @lru_cache(None)
    def f(u,a,b):
        if u<0: return 0
        if a==0 or b==0: return 1 if u==0 else 0
        return f(u-b,a-1,b)+f(u,a,b-1)
    tot=math.comb(n1+n2,n1)
    return [f(u,n1,n2)/tot for u in range(n1*n2+1)]
def cdf(n1,n2,u):
    d=udist(n1,n2); return sum(d[:int(u)+1])
def test(x,y,alpha=0.05,band=0.01,conf=0.95):
    n1,n2=len(x),len(y)
    U1=sum(1 for a in x for b in y if a<b) # pairs x<y
    U2=n1*n2-U1
    us=min(U1,U2)
    p=1.0 if U1==U2 else min(1,2*cdf(n1,n2,us))
    d=udist(n1,n2)
    # qu smallest q with P(U<=q)>=a/2
    a2=(1-conf)/2; c=0; qu=0
    for q in range(len(d)):
        c+=d[q]
        if c>=a2: qu=q;break
    if qu==0: qu=1
    diffs=sorted(math.log(b)-math.log(a) for a in x for b in y)
    lo,hi=diffs[qu-1],diffs[n1*n2-qu]
    sig = p<alpha and (lo>math.log1p(band) or hi<math.log1p(-band))
    return sig
for cv in [0.01,0.02,0.03,0.04]:
  for n in [5,6,7,8]:
    rnd=random.Random(1)
    T=4000
    fp=sum(test([math.exp(rnd.gauss(0,cv)) for _ in range(n)],[math.exp(rnd.gauss(0,cv)) for _ in range(n)]) for _ in range(T))/T
    pw=sum(test([math.exp(rnd.gauss(0,cv)) for _ in range(n)],[1.08*math.exp(rnd.gauss(0,cv)) for _ in range(n)]) for _ in range(T))/T
    print(f"cv={cv} n={n} fp={fp:.4f} power={pw:.3f}")
