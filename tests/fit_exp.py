#!/usr/bin/python3
"""tests/fit_exp.py - the coefficients of runtime/direct.c's exp
(EXP_FINISH): exp(r) ~ 1 + r (1 + r q(r)) with q of degree 3 on
[-ln2/2, ln2/2], fitted to exp's relative error (least squares, reweighted
towards the largest errors until they level out), then the float32
evaluation direct.c does checked against exp in double over [-87, 88]."""
import numpy as np

H = np.log(2) / 2
r = np.cos(np.linspace(0, np.pi, 8001)) * H


def rel_err(c, x):
    q = c[0] + x * (c[1] + x * (c[2] + x * c[3]))
    return (1 + x * (1 + x * q)) / np.exp(x) - 1


# sum_k c_k r^(k+2) / e^r = 1 - (1 + r) / e^r, in the least-squares sense
A = np.stack([r ** (k + 2) for k in range(4)], 1) / np.exp(r)[:, None]
y = 1 - (1 + r) / np.exp(r)
w = np.ones_like(r)
for _ in range(200):
    c, *_ = np.linalg.lstsq(A * w[:, None], y * w, rcond=None)
    e = np.abs(rel_err(c, r))
    w *= 1 + e / e.max()
c = [np.float32(v) for v in c]
print("q(r) coefficients, r^0..r^3:", ", ".join("%.9e" % v for v in c))
print("max relative error in exact arithmetic: %.3g" % e.max())

f = np.float32


def fma(a, b, d):  # one rounding, as the FMA GCC contracts these into
    return (a.astype(np.float64) * b + d).astype(f)


x = np.linspace(-87, 88, 8000001).astype(f)
magic = f(12583039.0)  # 1.5 * 2^23 + 127
fk = fma(x, f(1.44269504088896341), magic)
s = (fk.view(np.uint32) << np.uint32(23)).view(f)
k = fk - magic
rr = fma(k, -f(0.693359375), x)
rr = fma(k, -f(-2.12194440e-4), rr)
q = fma(np.full_like(rr, c[3]), rr, c[2])
q = fma(q, rr, c[1])
q = fma(q, rr, c[0])
got = fma((rr * s).astype(f), fma(q, rr, f(1)), s)
rel = np.abs(got.astype(np.float64) / np.exp(x.astype(np.float64)) - 1)
print("float32 evaluation over [-87, 88]: max relative error %.3g" % rel.max())
