"""Converters between the papers' regularization scalings and semiscale's canonical one.

semiscale writes every manifold-regularized least-squares problem as (DESIGN.md §3)

.. math::

    \\min_f \\frac{1}{l}\\sum_{i\\le l} (y_i - f(x_i))^2 + \\text{ambient\\_reg}\\,\\|f\\|_K^2
        + \\text{intrinsic\\_reg}\\,\\frac{f^\\top L f}{\\operatorname{tr}(L)}

so that good values transfer across n, k and edge-weight scales.  The papers use:

* paper 000 (Li et al. 2019), eq. (2)/(3): ``Σ loss + λ_A‖f‖² + λ_I fᵀLf``, hence
  ``ambient_reg = λ_A / l`` and ``intrinsic_reg = λ_I · tr(L) / l``;
* paper 004 (Belkin et al. convention): ``(1/l) Σ loss + γ_A‖f‖² + γ_I fᵀLf / (l+u)²``, hence
  ``ambient_reg = γ_A`` and ``intrinsic_reg = γ_I · tr(L) / (l+u)²``.
"""

from __future__ import annotations

__all__ = [
    "from_belkin",
    "from_paper000",
    "solver_lambdas",
    "to_belkin",
    "to_paper000",
]


def _check_nonneg(**values):
    for name, value in values.items():
        if not value >= 0:
            raise ValueError(f"{name} must be non-negative, got {value!r}")


def _check_positive(**values):
    for name, value in values.items():
        if not value > 0:
            raise ValueError(f"{name} must be positive, got {value!r}")


def solver_lambdas(ambient_reg, intrinsic_reg, n_labeled, laplacian_trace):
    """Paper 000's (λ_A, λ_I) for the un-normalised system ``(JK + λ_A I + λ_I LK) α = Jy``.

    Multiplying the canonical objective by ``l`` gives ``λ_A = l·ambient_reg`` and
    ``λ_I = l·intrinsic_reg / tr(L)``.  A zero trace (graph without edges) with a positive
    ``intrinsic_reg`` is an error: the intrinsic term would be undefined.
    """
    _check_nonneg(ambient_reg=ambient_reg, intrinsic_reg=intrinsic_reg)
    _check_positive(n_labeled=n_labeled)
    if intrinsic_reg == 0:
        return n_labeled * ambient_reg, 0.0
    if not laplacian_trace > 0:
        raise ValueError(
            "the graph Laplacian has zero trace (no edges), so the intrinsic term "
            "fᵀLf/tr(L) is undefined; use a graph with edges or intrinsic_reg=0"
        )
    return n_labeled * ambient_reg, n_labeled * intrinsic_reg / laplacian_trace


def from_paper000(lambda_ambient, lambda_intrinsic, n_labeled, laplacian_trace):
    """(ambient_reg, intrinsic_reg) equivalent to paper 000's (λ_A, λ_I), eq. (2)."""
    _check_nonneg(lambda_ambient=lambda_ambient, lambda_intrinsic=lambda_intrinsic)
    _check_positive(n_labeled=n_labeled, laplacian_trace=laplacian_trace)
    return lambda_ambient / n_labeled, lambda_intrinsic * laplacian_trace / n_labeled


def to_paper000(ambient_reg, intrinsic_reg, n_labeled, laplacian_trace):
    """Paper 000's (λ_A, λ_I) equivalent to (ambient_reg, intrinsic_reg)."""
    _check_positive(laplacian_trace=laplacian_trace)
    return solver_lambdas(ambient_reg, intrinsic_reg, n_labeled, laplacian_trace)


def from_belkin(gamma_ambient, gamma_intrinsic, n_samples, laplacian_trace):
    """(ambient_reg, intrinsic_reg) equivalent to Belkin et al.'s (γ_A, γ_I) (paper 004).

    ``n_samples`` is l + u, the number of labeled plus unlabeled points in the graph.
    """
    _check_nonneg(gamma_ambient=gamma_ambient, gamma_intrinsic=gamma_intrinsic)
    _check_positive(n_samples=n_samples, laplacian_trace=laplacian_trace)
    return gamma_ambient, gamma_intrinsic * laplacian_trace / n_samples**2


def to_belkin(ambient_reg, intrinsic_reg, n_samples, laplacian_trace):
    """Belkin et al.'s (γ_A, γ_I) equivalent to (ambient_reg, intrinsic_reg)."""
    _check_nonneg(ambient_reg=ambient_reg, intrinsic_reg=intrinsic_reg)
    _check_positive(n_samples=n_samples, laplacian_trace=laplacian_trace)
    return ambient_reg, intrinsic_reg * n_samples**2 / laplacian_trace
