r"""Loss functions of the manifold-regularization objective, as data of a problem.

Every estimator minimises (paper 000's un-normalised form, DESIGN.md §3)

.. math::

    \sum_{i \le l} \ell(y_i, f(x_i)) + λ_A \|f\|_K^2 + λ_I\, f^\top L f ,

and only :math:`\ell` differs between LapRLS (squared loss), primal LapSVM (squared or
Huber-smoothed hinge, paper 004 §3 with h = 0.01) and Laplacian SVR (ε-insensitive).  A loss
object gives, per labeled point, the value :math:`\ell(y, f)`, its derivative
:math:`\partial_f \ell` and its generalized second derivative :math:`\partial^2_f \ell`.

The losses here are *piecewise quadratic* with a single curvature ``c`` (:attr:`Loss.curvature`):
on each point the second derivative is either ``c`` (the point is *active*) or 0.  A Newton step
then is one weighted least-squares solve in which the active points carry the same weight
(:func:`semiscale.solvers.newton.solve_manifold`), so LapRLS's solvers and preconditioners serve
every loss.  For the squared loss every labeled point is always active and one step is exact.

Classification losses take targets ``y ∈ {−1, +1}``; regression losses take real ``y``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np

__all__ = [
    "LOSSES",
    "EpsilonInsensitiveLoss",
    "HuberHingeLoss",
    "Loss",
    "SquaredHingeLoss",
    "SquaredLoss",
    "get_loss",
]


class Loss(ABC):
    """Base class: a piecewise-quadratic loss ``ℓ(y, f)`` with one curvature.

    Subclasses implement :meth:`value`, :meth:`derivative` and :meth:`active`; the generalized
    second derivative is ``curvature`` where :meth:`active` is True and 0 elsewhere.
    """

    #: ℓ'' on the active points.
    curvature: float = 2.0
    #: True when a single weighted least-squares solve minimises the objective exactly.
    quadratic: bool = False
    #: "classification" (targets ±1) or "regression".
    task: str = "regression"
    name: str = ""

    @abstractmethod
    def value(self, y, f):
        """ℓ(y, f), elementwise."""

    @abstractmethod
    def derivative(self, y, f):
        """∂ℓ/∂f, elementwise."""

    @abstractmethod
    def active(self, y, f, tol=0.0):
        """Boolean mask of the points where ∂²ℓ/∂f² = ``curvature``.

        ``tol`` widens the quadratic zones by that much (Newton counts a point sitting on a zone
        boundary, up to round-off, as active).
        """

    def second_derivative(self, y, f):
        """Generalized ∂²ℓ/∂f², elementwise (``curvature`` or 0)."""
        return np.where(self.active(y, f), self.curvature, 0.0)

    def continuation(self) -> list[Loss]:
        """The losses Newton's method minimises in turn, each from the last one's solution.

        The last is ``self``; earlier ones are smoother versions of it that Newton solves in a
        few steps and that start the next one close to its active set.  Default: ``[self]``.
        """
        return [self]

    def __repr__(self):
        params = ", ".join(f"{k}={v!r}" for k, v in vars(self).items())
        return f"{type(self).__name__}({params})"

    def __eq__(self, other):
        return type(self) is type(other) and vars(self) == vars(other)

    def __hash__(self):
        return hash((type(self).__name__, tuple(sorted(vars(self).items()))))


class SquaredLoss(Loss):
    """``ℓ(y, f) = (y − f)²`` — LapRLS (paper 000 eq. 2); every point is active.

    Examples
    --------
    >>> from semiscale.losses import SquaredLoss
    >>> loss = SquaredLoss()
    >>> loss.value(1.0, [0.5, 1.0, 3.0]).tolist(), loss.derivative(1.0, [0.5, 1.0, 3.0]).tolist()
    ([0.25, 0.0, 4.0], [-1.0, 0.0, 4.0])
    """

    quadratic = True
    name = "squared"

    def value(self, y, f):
        return (np.asarray(y) - f) ** 2

    def derivative(self, y, f):
        return 2.0 * (np.asarray(f) - y)

    def active(self, y, f, tol=0.0):
        return np.ones(np.shape(f), dtype=bool)


class SquaredHingeLoss(Loss):
    """``ℓ(y, f) = max(0, 1 − y f)²`` — the L2-SVM loss of primal LapSVM (Chapelle 2007).

    Active where ``y f < 1``; there ℓ = (y − f)² because y² = 1.

    Examples
    --------
    >>> from semiscale.losses import SquaredHingeLoss
    >>> loss = SquaredHingeLoss()
    >>> loss.value(1.0, [-1.0, 0.5, 2.0]).tolist()          # margins y·f = -1, 0.5, 2
    [4.0, 0.25, 0.0]
    >>> loss.active(1.0, [-1.0, 0.5, 2.0]).tolist()
    [True, True, False]
    """

    task = "classification"
    name = "squared_hinge"

    def value(self, y, f):
        return np.maximum(0.0, 1.0 - np.asarray(y) * f) ** 2

    def derivative(self, y, f):
        y = np.asarray(y)
        return -2.0 * y * np.maximum(0.0, 1.0 - y * f)

    def active(self, y, f, tol=0.0):
        return np.asarray(y) * f < 1.0 + tol


#: Most smoother losses a :meth:`Loss.continuation` runs before the loss itself.
MAX_CONTINUATION_STAGES = 3


class HuberHingeLoss(Loss):
    r"""Huber-smoothed hinge with half-width ``h`` (paper 004 §3: h = 0.01; Chapelle 2007).

    With :math:`m = y f`:

    .. math::

        \ell = \begin{cases} 0 & m > 1 + h \\ (1 + h - m)^2 / (4h) & |1 - m| \le h \\
        1 - m & m < 1 - h \end{cases}

    Its curvature ``1/(2h)`` acts on the quadratic zone only; the linear zone contributes a
    constant gradient ``−y``.

    Parameters
    ----------
    h : float, default=0.01
        Half-width of the quadratic zone; the hinge is recovered as h → 0.

    Examples
    --------
    >>> from semiscale.losses import HuberHingeLoss
    >>> loss = HuberHingeLoss(h=0.5)
    >>> loss.value(1.0, [0.0, 1.0, 2.0]).tolist()          # linear, quadratic, zero zones
    [1.0, 0.125, 0.0]
    >>> loss.curvature                                      # 1 / (2h), in the quadratic zone
    1.0
    """

    task = "classification"
    name = "huber_hinge"

    def __init__(self, h: float = 0.01):
        h = float(h)
        if not (h > 0 and np.isfinite(h)):
            raise ValueError(f"h must be a positive finite float (e.g. 0.01), got {h!r}")
        self.h = h

    @property
    def curvature(self):
        return 1.0 / (2.0 * self.h)

    def value(self, y, f):
        m = np.asarray(y) * f
        h = self.h
        return np.where(m > 1 + h, 0.0, np.where(m < 1 - h, 1.0 - m, (1 + h - m) ** 2 / (4 * h)))

    def derivative(self, y, f):
        y = np.asarray(y)
        m = y * f
        h = self.h
        slope = np.where(m > 1 + h, 0.0, np.where(m < 1 - h, -1.0, -(1 + h - m) / (2 * h)))
        return slope * y

    def active(self, y, f, tol=0.0):
        m = np.asarray(y) * f
        return np.abs(1.0 - m) <= self.h + tol

    def continuation(self) -> list[Loss]:
        """Widths from 1 down to ``h``, tenfold apart (1, 0.1, 0.01 for h = 0.01).

        From f = 0 every labeled point lies in the linear zone of a narrow hinge, where the
        Newton model has no curvature, so each step can move only a few points into the
        quadratic zone: 40–50 steps at h = 0.01 on 1,500 a9a points.  A zone of half-width 1
        contains m = y f = 0, and each narrowing starts from a solution whose margins are
        already near 1.  At most :data:`MAX_CONTINUATION_STAGES` smoother losses, spaced
        evenly in log(h) when h < 10⁻³; none when h ≥ 1.
        """
        decades = -np.log10(self.h)
        n_stages = min(int(np.ceil(decades - 1e-12)), MAX_CONTINUATION_STAGES)
        if n_stages <= 0:
            return [self]
        widths = 10.0 ** (-decades * np.arange(n_stages) / n_stages)
        return [HuberHingeLoss(float(w)) for w in widths] + [self]


class EpsilonInsensitiveLoss(Loss):
    r"""Huber-smoothed ε-insensitive loss for regression (Laplacian SVR; paper 001 §3.2).

    With :math:`r = |y − f|`: 0 for ``r < ε``, ``(r − ε)²/(4h)`` for ``ε ≤ r ≤ ε + 2h``, and
    ``r − ε − h`` beyond; ``h → 0`` gives the ε-insensitive loss ``max(0, r − ε)``.  The smoothing
    makes it piecewise quadratic (curvature ``1/(2h)``), so the primal Newton solver applies;
    paper 001's exact (non-smooth) loss is solved in the dual by its core-vector machine.

    Parameters
    ----------
    epsilon : float, default=0.1
        Half-width of the insensitive tube.
    h : float, default=0.01
        Smoothing width.

    Examples
    --------
    >>> from semiscale.losses import EpsilonInsensitiveLoss
    >>> loss = EpsilonInsensitiveLoss(epsilon=0.5, h=0.25)
    >>> loss.value(0.0, [0.25, 0.75, 2.0]).tolist()        # inside the tube, smoothed, linear
    [0.0, 0.0625, 1.25]
    """

    name = "epsilon_insensitive"

    def __init__(self, epsilon: float = 0.1, h: float = 0.01):
        epsilon, h = float(epsilon), float(h)
        if not (epsilon >= 0 and np.isfinite(epsilon)):
            raise ValueError(f"epsilon must be a non-negative finite float, got {epsilon!r}")
        if not (h > 0 and np.isfinite(h)):
            raise ValueError(f"h must be a positive finite float (e.g. 0.01), got {h!r}")
        self.epsilon = epsilon
        self.h = h

    @property
    def curvature(self):
        return 1.0 / (2.0 * self.h)

    def value(self, y, f):
        r = np.abs(np.asarray(y) - f) - self.epsilon
        h = self.h
        return np.where(r < 0, 0.0, np.where(r > 2 * h, r - h, r**2 / (4 * h)))

    def derivative(self, y, f):
        diff = np.asarray(f) - y
        r = np.abs(diff) - self.epsilon
        h = self.h
        slope = np.where(r < 0, 0.0, np.where(r > 2 * h, 1.0, r / (2 * h)))
        return slope * np.sign(diff)

    def active(self, y, f, tol=0.0):
        r = np.abs(np.asarray(y) - f) - self.epsilon
        return (r >= -tol) & (r <= 2 * self.h + tol)


#: Loss names accepted by :func:`get_loss`.
LOSSES = {
    "squared": SquaredLoss,
    "squared_hinge": SquaredHingeLoss,
    "huber_hinge": HuberHingeLoss,
    "epsilon_insensitive": EpsilonInsensitiveLoss,
}


def get_loss(loss) -> Loss:
    """A :class:`Loss` from a name of :data:`LOSSES` or a :class:`Loss` instance.

    None is the squared loss (a :class:`~semiscale.solvers.problem.ManifoldProblem`'s default).

    Examples
    --------
    >>> from semiscale.losses import get_loss
    >>> get_loss("huber_hinge")
    HuberHingeLoss(h=0.01)
    >>> sorted(get_loss(name).task for name in ("squared", "squared_hinge"))
    ['classification', 'regression']
    """
    if isinstance(loss, Loss):
        return loss
    if loss is None:
        return SquaredLoss()
    try:
        return LOSSES[loss]()
    except (KeyError, TypeError):
        raise ValueError(
            f"loss={loss!r} is not one of {sorted(LOSSES)} or a semiscale.losses.Loss"
        ) from None
