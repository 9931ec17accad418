"""Defaults and declarative parameter constraints shared by the estimators.

``_parameter_constraints`` is scikit-learn's validation, checked at the start of ``fit``; each
estimator combines the dictionaries below with its own entries.
"""

from __future__ import annotations

from numbers import Integral, Real

from sklearn.base import clone
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions

from .._random import RANDOM_STATE_CONSTRAINT
from ..graph import KNNGraph
from ..kernels import KERNEL_NAMES, RBF, Kernel, resolve_kernel
from ..solvers.preconditioners import PRECONDITIONERS

__all__ = [
    "AUTO_INTRINSIC_REG_CONSTRAINT",
    "AUTO_INTRINSIC_REG_FACTOR",
    "EXACT_LAPRLS_AUTO_INTRINSIC_REG_FACTOR",
    "BALANCED_TARGETS_CONSTRAINT",
    "DEFAULT_CLASSIFIER_KERNEL",
    "DEFAULT_GRAPH",
    "DEFAULT_KERNEL",
    "EARLY_STOPPING_CONSTRAINTS",
    "KERNEL_CONSTRAINT",
    "MANIFOLD_PARAMETER_CONSTRAINTS",
    "OUT_OF_SAMPLE_CONSTRAINT",
    "UNLABELED_CONSTRAINT",
    "auto_intrinsic_reg",
    "default_graph",
    "default_kernel",
    "kernel_to_fit",
]


#: Defaults shared by every estimator instance (``ManifoldMixin.set_params`` copies one before a
#: nested update): objects rather than None, so that ``kernel__gamma`` / ``graph__n_neighbors``
#: work in every search.  The regressors' kernel is as wide as the data's median distance, the
#: classifiers' as narrow as its local scale.  Chosen by measurement: two moons with one label
#: per class, worst of 20 seeds 0.9960 at the defaults against 0.2688 at the median width (with
#: ``ambient_reg=1e-4``, ``intrinsic_reg=1``); 10 %-labeled space_ga / abalone / cpusmall, best
#: error of the grid (RMSE / std) 0.612 / 0.692 / 0.351 at the median width against 0.699 /
#: 0.778 / 0.414 at the local one; see ``benchmarks/results/defaults/``.
DEFAULT_KERNEL = RBF(gamma="median")
DEFAULT_CLASSIFIER_KERNEL = RBF(gamma="local")
DEFAULT_GRAPH = KNNGraph()


#: ``_parameter_constraints`` (scikit-learn's declarative validation, checked at the start of
#: ``fit``) of the parameters every estimator shares; each estimator adds its own.
#: ``kernel``: a kernel object, a kernel's name (:func:`kernel_to_fit`) or None (the default).
KERNEL_CONSTRAINT = {"kernel": [Kernel, StrOptions(set(KERNEL_NAMES)), None]}
MANIFOLD_PARAMETER_CONSTRAINTS = {
    **KERNEL_CONSTRAINT,
    "graph": [HasMethods(["fit"]), None],
    "ambient_reg": [Interval(Real, 0, None, closed="left")],
    "intrinsic_reg": [Interval(Real, 0, None, closed="left")],
    "preconditioner": [StrOptions({name for name in PRECONDITIONERS if name is not None}), None],
    "tol": [Interval(Real, 0, None, closed="neither")],
    "max_iter": [Interval(Integral, 0, None, closed="left"), None],
    "memory_budget": [Interval(Real, 0, None, closed="neither"), str, None],
    "random_state": RANDOM_STATE_CONSTRAINT,
    "verbose": ["verbose"],
    "fit_intercept": ["boolean"],
}
#: ``intrinsic_reg`` of the classifiers: a weight, or "auto" (:func:`auto_intrinsic_reg`).
AUTO_INTRINSIC_REG_CONSTRAINT = {
    "intrinsic_reg": [Interval(Real, 0, None, closed="left"), StrOptions({"auto"})]
}
#: ``intrinsic_reg="auto"`` is ``AUTO_INTRINSIC_REG_FACTOR · (n / l)²``.
AUTO_INTRINSIC_REG_FACTOR = 0.01
#: The factor of the exact ``LapRLSClassifier`` (no label diffusion).  Chosen by measurement on
#: the default graph: usps, 3 trials, 91.7 / 94.5 / 94.8 % at 1 / 3 / 10 labels per class
#: against 80.4 / 90.0 / 94.4 % with 0.01, see ``benchmarks/results/auto_intrinsic_reg/``
#: (ad hoc, 2,000-point subsets, 3 seeds: usps at one label per class 80.0 % against 62.1 %,
#: letter at ten 57.0 % against 60.8 %, the smallest worst-case loss of 0.01, 0.1 and 1).
#: Nyström LapRLS keeps 0.01: its label diffusion does what the larger weight does, and 0.01 is
#: its best or within 0.1 point of it on usps, mnist and letter (same folder).
EXACT_LAPRLS_AUTO_INTRINSIC_REG_FACTOR = 1.0
#: The classifiers' marker of unlabeled points (None: every point is labeled).
UNLABELED_CONSTRAINT = {"unlabeled": [Real, str, None]}
#: How the inductive classifiers evaluate new points (:mod:`semiscale.models._extension`).
OUT_OF_SAMPLE_CONSTRAINT = {"out_of_sample": [StrOptions({"graph", "kernel"})]}
#: The least-squares classifiers' choice of class-balanced targets.
BALANCED_TARGETS_CONSTRAINT = {"balanced_targets": ["boolean"]}
#: The primal LapSVMs' early stopping (Melacci & Belkin's stability check).
EARLY_STOPPING_CONSTRAINTS = {
    "early_stopping": ["boolean"],
    "stability_tol": [Interval(Real, 0, 1, closed="both")],
}


def auto_intrinsic_reg(n_samples: int, n_labeled: int, factor=AUTO_INTRINSIC_REG_FACTOR) -> float:
    """``intrinsic_reg="auto"``: ``factor · (n / l)²`` for n training points, l of them labeled.

    ``factor`` is 0.01 (:data:`AUTO_INTRINSIC_REG_FACTOR`) but for the exact
    ``LapRLSClassifier`` (:data:`EXACT_LAPRLS_AUTO_INTRINSIC_REG_FACTOR`, 1).

    For the classifiers' class-balanced, centred targets the best ``ρ = intrinsic_reg · l / n``
    grows with n at a fixed label count and falls as l grows; ``0.01 · (n/l)²`` follows both.
    Chosen by measurement: within 3.0 points of the best fixed-ρ setting on usps and letter
    (1 to 10 labels per class, equal and unequal counts), see
    ``benchmarks/results/few_label_laprls/``.

    Examples
    --------
    >>> from semiscale.models._defaults import auto_intrinsic_reg
    >>> auto_intrinsic_reg(2000, 20)
    100.0
    """
    return factor * (n_samples / n_labeled) ** 2


def _is_shared_default(obj) -> bool:
    return any(
        obj is shared for shared in (DEFAULT_KERNEL, DEFAULT_CLASSIFIER_KERNEL, DEFAULT_GRAPH)
    )


def default_kernel():
    """A fresh default kernel of the regressors: ``RBF(gamma="median")``."""
    return clone(DEFAULT_KERNEL)


def kernel_to_fit(kernel, default: Kernel) -> Kernel:
    """The kernel an estimator fits for its ``kernel`` parameter, ``default`` its default kernel.

    None: a copy of ``default``.  A name of :data:`semiscale.kernels.KERNEL_NAMES`: that kernel
    (:func:`~semiscale.kernels.resolve_kernel`), with the default's width when it is the
    default's class, so that ``kernel="rbf"`` means this estimator's default RBF as
    ``SVC(kernel="rbf")`` means SVC's (``gamma="scale"`` there), and with its class's defaults
    otherwise.  A kernel object: itself.

    Examples
    --------
    >>> from semiscale.kernels import RBF
    >>> from semiscale.models._defaults import kernel_to_fit
    >>> kernel_to_fit("rbf", RBF(gamma="local"))
    RBF(gamma='local')
    >>> kernel_to_fit("linear", RBF(gamma="local"))
    Linear()
    """
    if kernel is None:
        return clone(default)
    if isinstance(kernel, str):
        same_class = KERNEL_NAMES.get(kernel) is type(default)
        return resolve_kernel(kernel, gamma=default.gamma if same_class else None)
    return kernel


def kernel_reading_marker(kernel: Kernel, estimator) -> Kernel:
    """``kernel``, reading ``y`` in its ``fit`` with ``estimator``'s marker of unlabeled rows.

    A kernel that reads labels (an ``unlabeled`` parameter: ``DataDependentKernel``'s landmark
    selection) must mark the rows the estimator marks: a copy with the estimator's
    ``unlabeled``, or None (missing values only) for an estimator without one (the
    regressors: NaN).  Other kernels are returned as they are.
    """
    params = kernel.get_params(deep=False)
    if "unlabeled" not in params:
        return kernel
    marker = estimator.get_params(deep=False).get("unlabeled", None)
    if params["unlabeled"] is marker:
        return kernel
    return clone(kernel).set_params(unlabeled=marker)


def default_graph():
    """A fresh default graph: ``KNNGraph()`` (used when ``graph=None``)."""
    return clone(DEFAULT_GRAPH)
