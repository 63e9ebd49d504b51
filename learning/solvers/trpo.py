"""Trust-region steps (TRPO, Schulman et al. 2015; as GAIL's reference implementation takes them).

Pure numpy functions on flat float64 parameter vectors; the caller supplies the model as closures,
averaged over MPI ranks where it trains on several (so every rank computes the same step):
    fvp(v)   -> F v, the Fisher (or Gauss-Newton) matrix of the constraint at x0 times v
    f(x)     -> (loss, kl): the surrogate loss (minimised) and the constraint's value at x
One step minimises the linearised loss g.d subject to 0.5 d'(F + damping I)d <= max_kl:
    s     = CG solution of (F + damping I) s = -g            (at most cg_iters iterations)
    d     = s sqrt(max_kl / (0.5 s'(F + damping I)s))        (so 0.5 d'(F + damping I)d = max_kl)
then backtracks x = x0 + t d, t = 1, shrink, shrink^2, ... (at most max_steps trials), accepting
the first t whose loss improvement f(x0) - f(x) is at least accept_ratio times the linear model's
t (-g.d) and whose kl is at most reject_kl (2 max_kl). With no trial accepted, x0 is kept.
"""
from dataclasses import dataclass

import numpy as np

ACCEPT_RATIO = 0.1
SHRINK = 0.5


@dataclass(frozen=True)
class TrustRegionResult:
    x: np.ndarray
    accepted: bool
    steps: int              # shrinks before the accepted trial (0: the full step); max_steps if none
    loss: float             # at x
    kl: float               # at x (0 when x0 is kept)
    loss_before: float
    expected_improve: float  # -g.d of the full step


def conjugate_gradient(fvp, b, iters=10, residual_tol=1e-10):
    """x with A x ~ b for a symmetric positive-definite A given as fvp(v) = A v; stops after `iters`
    products or when |r|^2 < residual_tol."""
    b = np.asarray(b, dtype=np.float64)
    x = np.zeros_like(b)
    r, p = b.copy(), b.copy()
    rr = r @ r
    for _ in range(iters):
        if rr < residual_tol:
            break
        ap = fvp(p)
        alpha = rr / (p @ ap)
        x += alpha * p
        r -= alpha * ap
        rr_new = r @ r
        p = r + (rr_new / rr) * p
        rr = rr_new
    return x


def line_search(f, x0, loss0, fullstep, expected_improve, reject_kl, accept_ratio=ACCEPT_RATIO,
                shrink=SHRINK, max_steps=10):
    """Backtracking line search (see the module docstring); a TrustRegionResult."""
    for k in range(max_steps):
        t = shrink ** k
        x = x0 + t * fullstep
        loss, kl = f(x)
        improve = loss0 - loss
        if np.isfinite(loss) and kl <= reject_kl and improve > 0 and improve >= accept_ratio * t * expected_improve:
            return TrustRegionResult(x, True, k, float(loss), float(kl), float(loss0), float(expected_improve))
    return TrustRegionResult(x0, False, max_steps, float(loss0), 0.0, float(loss0), float(expected_improve))


def trust_region_step(x0, grad, fvp, f, max_kl, damping=0.1, cg_iters=10, max_steps=10,
                      accept_ratio=ACCEPT_RATIO, shrink=SHRINK, reject_factor=2.0):
    """One TRPO step from x0 given the loss gradient `grad` at x0; a TrustRegionResult."""
    x0 = np.asarray(x0, dtype=np.float64)
    grad = np.asarray(grad, dtype=np.float64)
    loss0, _ = f(x0)

    def damped(v):
        return fvp(v) + damping * v

    step_dir = conjugate_gradient(damped, -grad, cg_iters)
    shs = 0.5 * step_dir @ damped(step_dir)
    if not np.isfinite(shs) or shs <= 0:
        return TrustRegionResult(x0, False, 0, float(loss0), 0.0, float(loss0), 0.0)
    fullstep = step_dir * np.sqrt(max_kl / shs)
    return line_search(f, x0, loss0, fullstep, float(-grad @ fullstep), reject_factor * max_kl,
                       accept_ratio, shrink, max_steps)
