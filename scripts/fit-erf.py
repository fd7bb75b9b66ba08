#!/usr/bin/env python3
# fit-erf.py - derives the coefficients of ftpipe-approximate-math's f32 erf
# (lib/Conversion/ApproximateMath.cpp) and checks the approximation.
#
#   build/.venv-ref/bin/python scripts/fit-erf.py
#
# Needs numpy and mpmath (both in the reference environment). Prints:
#   - S: erf(x) / x on [0, 1] as a degree-6 polynomial in x^2 (least squares
#     in relative error) and its largest relative error in f64;
#   - P / Q: erfc(a) * exp(a^2) on [1, 4] as a (4, 4) rational function with
#     Q(0) = 1 (linearised least squares, reweighted by 1/Q five times) and
#     its largest relative error in f64;
#   - the largest and mean error, in ulp of the exact value, of the whole
#     approximation evaluated in f32 as the pass builds it (Horner with f32
#     rounding, x^2 split into two floats, an exact exponential), over
#     [-6, 6], and that of the C library's erf rounded to f32.
import math

import mpmath
import numpy as np

mpmath.mp.dps = 30
f32 = np.float32


def fit_small():
    x = np.linspace(1e-4, 1.0, 4001)
    f = np.array([float(mpmath.erf(v) / v) for v in x])
    v = np.vander(x * x, 7, increasing=True)
    c, *_ = np.linalg.lstsq(v / f[:, None], np.ones_like(f), rcond=None)
    return c, np.max(np.abs(v @ c - f) / f)


def fit_large(p=4, q=4):
    a = np.linspace(1.0, 4.0, 4001)
    r = np.array([float(mpmath.erfc(v) * mpmath.exp(v * v)) for v in a])
    vp = np.vander(a, p + 1, increasing=True)
    vq = np.vander(a, q + 1, increasing=True)[:, 1:]
    design = np.hstack([vp, -(r[:, None] * vq)])
    weight = 1 / r
    for _ in range(6):
        c, *_ = np.linalg.lstsq(design * weight[:, None], r * weight,
                                rcond=None)
        weight = 1 / (r * np.abs(1 + vq @ c[p + 1:]))
    approx = (vp @ c[:p + 1]) / (1 + vq @ c[p + 1:])
    return c[:p + 1], np.concatenate([[1.0], c[p + 1:]]), \
        np.max(np.abs(approx - r) / r)


def horner(coefficients, at):
    total = f32(coefficients[-1])
    for c in reversed(coefficients[:-1]):
        total = f32(f32(total * at) + f32(c))
    return total


def erf32(x, small, p, q):
    x = f32(x)
    a = abs(x)
    if a < 1:
        return f32(x * horner(small, f32(x * x)))
    a = min(a, f32(10))
    high = f32(a * a)
    low = f32(np.float64(a) * a - high)
    decay = f32(f32(math.exp(-float(high))) * f32(1 - low))
    ratio = f32(horner(p, a) / horner(q, a))
    return f32(math.copysign(f32(1 - f32(decay * ratio)), x))


def ulp_error(value, exact):
    return abs(float(value) - exact) / float(np.spacing(f32(abs(exact))))


def main():
    small, small_error = fit_small()
    p, q, large_error = fit_large()
    print("S (x^2 powers 0..6):", ", ".join("%.9g" % c for c in small))
    print("  largest relative error in f64: %.2g" % small_error)
    print("P:", ", ".join("%.9g" % c for c in p))
    print("Q:", ", ".join("%.9g" % c for c in q))
    print("  largest relative error in f64: %.2g" % large_error)
    xs = np.linspace(-6, 6, 28572).astype(np.float32)
    ours, libm = [], []
    for x in xs:
        exact = float(mpmath.erf(float(x)))
        ours.append(ulp_error(erf32(x, small, p, q), exact))
        libm.append(ulp_error(f32(math.erf(float(x))), exact))
    print("f32 evaluation over [-6, 6], %d points: at most %.2f ulp, %.2f "
          "on average (C library rounded to f32: at most %.2f)"
          % (len(xs), max(ours), np.mean(ours), max(libm)))


if __name__ == "__main__":
    main()
