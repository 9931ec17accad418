r"""Transfer functions of the cluster kernel (Chapelle, Weston & Schölkopf, NIPS 2002).

A cluster kernel reshapes the spectrum of :math:`L = D^{-1/2} K D^{-1/2}`: with its eigenvalues
:math:`σ_1 ≥ σ_2 ≥ … ≥ σ_k` (decreasing, as paper 003 §2 orders them) and a cut :math:`h`, a
transfer function :math:`φ` gives the new eigenvalues :math:`\tilde σ_i = φ(σ)_i`.  Indices are
1-based in the formulas below (:math:`i ≤ h` are the ``h`` largest eigenvalues); the functions
take the whole vector ``sigma`` and the cut, since the step functions depend on the rank ``i``
and not on the value alone.

==================  =======================================================================
name                :math:`\tilde σ_i`
==================  =======================================================================
``"linear"``        :math:`σ_i` (the kernel itself, renormalized)
``"step"``          :math:`1` for :math:`i ≤ h`, :math:`0` for :math:`i > h`
``"linear-step"``   :math:`σ_i` for :math:`i ≤ h`, :math:`0` for :math:`i > h`
``"polynomial"``    :math:`σ_i^t`, :math:`t` = :data:`POLYNOMIAL_POWER` = 2
``"poly-step"``     :math:`σ_i^{1/2}` for :math:`i ≤ h`, :math:`σ_i^2` for :math:`i > h`
==================  =======================================================================

Chapelle et al. define the step functions with a cut on the *count* of kept eigenvalues (the
number of clusters) and the polynomial one as :math:`λ^t` with a free ``t``, which they leave
to model selection; this module fixes ``t = 2`` (the power poly-step applies to its tail), and
any other power is a callable, e.g. ``functools.partial(polynomial, power=3)``.  Paper 003
uses poly-step with :math:`h = l + 9` (``l`` labeled points), the best transfer of Chapelle et
al.; the extraction of eq. (1) lost the exponents, which DESIGN.md §4 reads as above.

The eigenvalues given to a transfer are non-negative (:func:`~semiscale.cluster_kernels.\
_spectral.virtual_samples` clips the rounding-error negatives of the PSD matrix ``L`` to 0
first), so the square root is always defined.
"""

from __future__ import annotations

from numbers import Integral

import numpy as np

__all__ = [
    "POLYNOMIAL_POWER",
    "TRANSFERS",
    "apply_transfer",
    "linear",
    "linear_step",
    "poly_step",
    "polynomial",
    "resolve_transfer",
    "step",
]

#: The power ``t`` of ``transfer="polynomial"`` (:math:`\tilde σ_i = σ_i^t`).
POLYNOMIAL_POWER = 2


def _head(sigma, cut):
    """Mask of the ``cut`` largest eigenvalues (the first ``cut`` entries)."""
    head = np.zeros(sigma.shape[0], dtype=bool)
    head[: max(int(cut), 0)] = True
    return head


def linear(sigma, cut):
    r""":math:`\tilde σ_i = σ_i` (``cut`` is ignored)."""
    return np.array(sigma, dtype=np.float64)


def step(sigma, cut):
    r""":math:`\tilde σ_i = 1` for :math:`i ≤ h`, else :math:`0` (``h = cut``)."""
    return _head(sigma, cut).astype(np.float64)


def linear_step(sigma, cut):
    r""":math:`\tilde σ_i = σ_i` for :math:`i ≤ h`, else :math:`0` (``h = cut``)."""
    return np.where(_head(sigma, cut), sigma, 0.0).astype(np.float64)


def polynomial(sigma, cut, power=POLYNOMIAL_POWER):
    r""":math:`\tilde σ_i = σ_i^t` with :math:`t` = ``power`` (``cut`` is ignored)."""
    return np.power(np.asarray(sigma, dtype=np.float64), float(power))


def poly_step(sigma, cut):
    r""":math:`\tilde σ_i = σ_i^{1/2}` for :math:`i ≤ h`, else :math:`σ_i^2` (``h = cut``).

    Paper 003 eq. (1) with :math:`h = l + 9`.  When ``h`` is at least the number of
    eigenvalues given, every one is in the head and poly-step is a plain square root.
    """
    sigma = np.asarray(sigma, dtype=np.float64)
    return np.where(_head(sigma, cut), np.sqrt(sigma), sigma * sigma)


#: The named transfers ``transfer=`` accepts.
TRANSFERS = {
    "linear": linear,
    "step": step,
    "linear-step": linear_step,
    "polynomial": polynomial,
    "poly-step": poly_step,
}


def resolve_transfer(transfer, *, param: str = "transfer"):
    """The transfer function named by ``transfer``, or ``transfer`` itself when callable.

    Parameters
    ----------
    transfer : str or callable
        One of :data:`TRANSFERS`' names, or a callable ``(sigma, cut) -> sigma_tilde`` taking
        the non-negative eigenvalues in decreasing order (ndarray of shape (k,)) and the cut
        ``h`` (int) and returning ``k`` finite non-negative values (checked by
        :func:`apply_transfer`).
    param : str
        The parameter's name, for the error message.

    Returns
    -------
    callable

    Raises
    ------
    ValueError
        For a string that names no transfer (the message lists the names).
    TypeError
        For anything else than a string or a callable.
    """
    if isinstance(transfer, str):
        if transfer not in TRANSFERS:
            names = ", ".join(repr(name) for name in TRANSFERS)
            raise ValueError(
                f"{param}={transfer!r} names no transfer function: use one of {names}, or pass "
                "a callable (sigma, cut) -> new eigenvalues"
            )
        return TRANSFERS[transfer]
    if callable(transfer):
        return transfer
    raise TypeError(
        f"{param} must be one of {sorted(TRANSFERS)} or a callable (sigma, cut) -> new "
        f"eigenvalues; got {type(transfer).__name__} {transfer!r}"
    )


def apply_transfer(transfer, sigma, cut, *, param: str = "transfer"):
    """``resolve_transfer(transfer)(sigma, cut)``, checked: ``k`` finite values ≥ 0.

    Raises
    ------
    ValueError
        When the result has another shape, or a negative or non-finite value (a virtual
        sample's coordinates are the square roots of the new eigenvalues).
    """
    if not isinstance(cut, Integral | np.integer):
        raise TypeError(f"cut must be an integer, got {type(cut).__name__} {cut!r}")
    sigma = np.asarray(sigma, dtype=np.float64)
    out = np.asarray(resolve_transfer(transfer, param=param)(sigma, int(cut)), dtype=np.float64)
    if out.shape != sigma.shape:
        raise ValueError(
            f"{param} returned shape {out.shape} for {sigma.shape[0]} eigenvalues; a transfer "
            "function returns one new eigenvalue per eigenvalue"
        )
    if not np.all(np.isfinite(out)) or np.any(out < 0):
        raise ValueError(
            f"{param} returned a negative or non-finite eigenvalue (min {np.nanmin(out)!r}); "
            "the cluster kernel needs finite non-negative eigenvalues: clip them in the callable"
        )
    return out
