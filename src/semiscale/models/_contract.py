"""What an estimator offers the shared fit path and approximate CV, declared once per class.

Every estimator class sets ``_fit_contract``, a frozen :class:`FitContract`: which fit path it
takes, the span of its kernel expansion, which optional capabilities it has (an intercept,
early stopping, the hinge's centring, class-balanced targets, the graph extension to new
points, label diffusion, a memory budget, threads) and whether approximate cross-validation
(:mod:`semiscale.model_selection.bif`) can expand its fit.  The shared fit path
(:mod:`semiscale.models._base`) and approximate CV read this declaration instead of probing the
estimator for attributes it may lack: a capability declared is a parameter the estimator has
and honours, one not declared is never read.  ``tests/test_contract.py`` checks every
estimator's declaration against its parameters and behaviour.

How a configured estimator turns the solver's raw fit into its decision (the target coding,
the centring of the fitted columns, the labeled prior, the ``"auto"`` intrinsic weight) is
derived from the declaration and the parameters by :func:`fit_rules`, in one place: ``fit``
applies the rules, keeps them in its :class:`~semiscale.models._fit_state.FitState`, and
approximate CV repeats them on every fold from there, so the two cannot drift apart.

Why a class attribute holding a frozen dataclass, and not scikit-learn's ``__sklearn_tags__``:
the declaration is static, so it is read off the class without building an instance (the
common tests enumerate estimator classes); it is one typed object whose fields are listed in
one place, as FALKON groups its knobs in ``options.py``; and it does not depend on scikit-learn's
``Tags`` dataclass, whose fields scikit-learn validates and has changed between releases, while
scikit-learn's own checks keep reading the tags the estimators set for them (sparse input,
required targets).  A subclass that changes a capability redeclares the contract with
:func:`dataclasses.replace`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._validation import balanced_targets, one_vs_rest_targets, zero_mean_targets
from ..losses import SquaredLoss, get_loss
from ._defaults import auto_intrinsic_reg

__all__ = [
    "CAPABILITY_PARAMETERS",
    "EXPANSIONS",
    "FIT_PATHS",
    "FitContract",
    "KERNEL_PATHS",
    "PATHS_WITHOUT_EXPANSION",
    "FitRules",
    "fit_contract",
    "fit_rules",
    "formulation_of",
    "labels_from_decision",
]

#: How an estimator fits: the shared manifold-regularization path (a
#: :class:`~semiscale.solvers.problem.ManifoldProblem` handed to the estimator's ``_solve``), a
#: core vector machine of its own (SLapCVM), label propagation on the graph alone, or a kernel
#: machine of scikit-learn's (libsvm) on a kernel learned from all points (paper 002's
#: ``DataDependentSVC``: the graph, if any, belongs to the kernel; paper 003's TSVM), a
#: classifier of scikit-learn's on features that a transformer learned from all points (paper
#: 003's ``StorageFitClassifier``: a ``transformer`` and a ``classifier``, no ``kernel``), or a
#: nearest-neighbour search among the labeled points (paper 003's 1-NN baseline: no kernel, no
#: randomness, so neither a ``kernel`` nor a ``random_state``).
FIT_PATHS = (
    "manifold",
    "core-vector-machine",
    "label-propagation",
    "kernel-machine",
    "feature-machine",
    "nearest-neighbors",
)
#: The fit paths whose model is no kernel expansion (``expansion=None``).
PATHS_WITHOUT_EXPANSION = ("label-propagation", "nearest-neighbors")
#: The fit paths whose estimators have a ``kernel`` parameter.
KERNEL_PATHS = ("manifold", "core-vector-machine", "kernel-machine")
#: The points of the learned kernel expansion ``Σ_j α_j k(x_j, ·)``: all training points (the
#: labeled ones without a graph term), Nyström centers, a core set's support; None: no kernel.
EXPANSIONS = ("training", "centers", "support", None)
#: The estimator parameters each optional capability of :class:`FitContract` stands for.
CAPABILITY_PARAMETERS = {
    "fit_intercept": ("fit_intercept",),
    "early_stopping": ("early_stopping", "stability_tol"),
    "centring": ("centring",),
    "balanced_targets": ("balanced_targets",),
    "out_of_sample": ("out_of_sample",),
    "label_diffusion": ("label_diffusion",),
    "memory_budget": ("memory_budget",),
    "n_jobs": ("n_jobs",),
}


@dataclass(frozen=True)
class FitContract:
    """What an estimator class offers the shared fit path and approximate CV.

    Each boolean capability names the parameter(s) the estimator has for it; the shared code
    reads a parameter only where its capability is declared.

    Attributes
    ----------
    fit_path : {"manifold", "core-vector-machine", "label-propagation", "kernel-machine", \
"feature-machine", "nearest-neighbors"}
        :data:`FIT_PATHS`.  ``"manifold"``: ``ManifoldMixin._fit_problem``, the estimator
        implementing ``_solve(problem) -> Solution`` (and ``_check_before_graph``).
        ``"kernel-machine"``: a ``kernel`` but no ``graph`` parameter.  ``"feature-machine"``:
        a ``transformer`` and a ``classifier``, no ``kernel``.  ``"nearest-neighbors"``: no
        ``kernel`` and no ``random_state``.
    expansion : {"training", "centers", "support"} or None
        :data:`EXPANSIONS`: the span of the fitted function.  Approximate CV's exact Hessian
        exists for ``"training"``; ``"centers"`` is approximated on its own centers.
    fit_intercept : bool
        A ``fit_intercept`` parameter: an unpenalised bias in the problem.
    early_stopping : bool
        ``early_stopping`` and ``stability_tol``: the Newton iteration's stability check.
    centring : bool
        A ``centring`` parameter: the hinge classifiers centre their fitted columns (and add
        the labeled prior) only when it is on; the squared loss's classifiers always do.
    balanced_targets : bool
        A ``balanced_targets`` parameter: class-balanced rather than zero-mean targets.
    out_of_sample : bool
        An ``out_of_sample`` parameter: ``"graph"`` extends the fitted graph to new points
        (:mod:`semiscale.models._extension`), ``"kernel"`` evaluates the expansion.
    label_diffusion : bool
        A ``label_diffusion`` parameter: random-walk steps of the Nyström labeled term.
    memory_budget : bool
        A ``memory_budget`` parameter, which ``fit`` honours: what the solve cannot hold is
        refused (``MemoryBudgetError``) before the graph is built, and the graph inherits it.
    n_jobs : bool
        An ``n_jobs`` parameter (threads of kernel blocks, graph and neighbour searches).
    approximate_cv : bool
        :func:`semiscale.model_selection.bif_cross_val_score` can expand the fit: a
        ``"manifold"`` fit of a smooth loss at its minimiser, which keeps a
        :class:`~semiscale.models._fit_state.FitState` (``_fit_state_``) when the estimator's
        ``_keep_fit_state`` is set before ``fit``.
    dask : bool
        ``fit``, ``predict`` and ``decision_function`` take a row-chunked ``dask.array`` ``X``
        and run on :class:`semiscale.backends.DaskOps` (the default ``distributed`` client),
        ``X`` staying on the workers; estimators without it refuse a dask ``X`` with a
        ``TypeError`` (:func:`semiscale._validation.validate_X`).
    approximate_cv_formulations : tuple of str or None
        The values of the estimator's ``formulation`` parameter whose fit approximate CV can
        expand (``LapSVC``'s dual QP has no smooth loss); None: the estimator has no
        ``formulation`` and every fit can be expanded.
    """

    fit_path: str
    expansion: str | None
    fit_intercept: bool = False
    early_stopping: bool = False
    centring: bool = False
    balanced_targets: bool = False
    out_of_sample: bool = False
    label_diffusion: bool = False
    memory_budget: bool = True
    n_jobs: bool = False
    approximate_cv: bool = False
    dask: bool = False
    approximate_cv_formulations: tuple[str, ...] | None = None

    def __post_init__(self):
        if self.fit_path not in FIT_PATHS:
            raise ValueError(f"fit_path must be one of {FIT_PATHS}, got {self.fit_path!r}")
        if self.expansion not in EXPANSIONS:
            raise ValueError(f"expansion must be one of {EXPANSIONS}, got {self.expansion!r}")
        if (self.expansion is None) != (self.fit_path in PATHS_WITHOUT_EXPANSION):
            raise ValueError(
                f"fit_path={self.fit_path!r} needs expansion "
                f"{'None' if self.fit_path in PATHS_WITHOUT_EXPANSION else 'other than None'}, "
                f"got {self.expansion!r}"
            )
        if self.approximate_cv and self.fit_path != "manifold":
            raise ValueError(
                f"approximate_cv=True needs fit_path='manifold' (the path that keeps the fit "
                f"state approximate CV expands), got fit_path={self.fit_path!r}"
            )
        if self.approximate_cv and not self.memory_budget:
            raise ValueError(
                "approximate_cv=True needs memory_budget=True: approximate CV checks its exact "
                "Hessian against the estimator's memory_budget"
            )

    def parameters(self) -> set[str]:
        """The estimator parameters this contract says the estimator has."""
        names = {"verbose"}
        if self.fit_path != "nearest-neighbors":
            names.add("random_state")
        if self.fit_path in KERNEL_PATHS:
            names.add("kernel")
        if self.fit_path == "feature-machine":
            names |= {"transformer", "classifier"}
        if self.fit_path in ("manifold", "core-vector-machine"):
            names.add("graph")
        if self.fit_path == "manifold":
            names |= {"ambient_reg", "intrinsic_reg"}
        for capability, params in CAPABILITY_PARAMETERS.items():
            if getattr(self, capability):
                names.update(params)
        if self.approximate_cv_formulations is not None:
            names.add("formulation")
        return names


def fit_contract(estimator) -> FitContract | None:
    """The :class:`FitContract` an estimator (or estimator class) declares; None for others.

    Estimators of other libraries (scikit-learn's, a ``Pipeline``) declare none.
    """
    cls = estimator if isinstance(estimator, type) else type(estimator)
    # the one look-up of the declaration itself: any object may be passed here
    contract = getattr(cls, "_fit_contract", None)
    return contract if isinstance(contract, FitContract) else None


def formulation_of(estimator) -> str | None:
    """The formulation an estimator fits (None when its contract declares no ``formulation``).

    Read through the estimator's ``_formulation()``, which resolves a deprecated spelling
    (``LapSVC(solver="dual")``) without warning.
    """
    contract = fit_contract(estimator)
    if contract is None or contract.approximate_cv_formulations is None:
        return None
    return estimator._formulation()


@dataclass(frozen=True)
class FitRules:
    """How a configured estimator turns the solver's raw fit ``g`` into its decision.

    Built by :func:`fit_rules` from the estimator's contract and parameters; ``fit`` applies
    them and approximate CV repeats them on each fold's approximate fit.

    Attributes
    ----------
    loss : object
        The loss of the problem (a :mod:`semiscale.losses` name or object).
    squared : bool
        Whether it is the squared loss (on the manifold fit path).
    target_coding : {"zero_mean", "balanced", "plus_minus"}
        The classifiers' target columns (:meth:`encode_targets`).
    centre_with_graph : bool
        Whether the fitted columns are centred when there is a graph term (:meth:`centres`).
    labeled_prior : bool
        Whether the decision is rescaled with the labeled prior added (:meth:`adds_labeled_prior`).
    intrinsic_reg : float or "auto"
        The ``intrinsic_reg`` parameter.
    auto_intrinsic_factor : float
        ``c`` of ``intrinsic_reg="auto"`` = ``c · (n / l)²``.
    """

    loss: object
    squared: bool
    target_coding: str
    centre_with_graph: bool
    labeled_prior: bool
    intrinsic_reg: object
    auto_intrinsic_factor: float

    def resolve_intrinsic_reg(self, n_samples: int, n_labeled: int) -> float:
        """``intrinsic_reg`` as a number (``"auto"`` by :func:`~._defaults.auto_intrinsic_reg`)."""
        if isinstance(self.intrinsic_reg, str) and self.intrinsic_reg == "auto":
            return auto_intrinsic_reg(n_samples, n_labeled, self.auto_intrinsic_factor)
        return float(self.intrinsic_reg)

    def encode_targets(self, targets):
        """The target columns fitted for these labels (``SSLClassifierMixin``'s docstring)."""
        if self.target_coding == "balanced":
            return balanced_targets(targets)
        if self.target_coding == "zero_mean":
            return zero_mean_targets(targets)
        return one_vs_rest_targets(targets)

    @property
    def plus_minus(self) -> bool:
        """Whether the targets are the ±1 one-vs-rest columns."""
        return self.target_coding == "plus_minus"

    def centres(self, lambda_intrinsic: float) -> bool:
        """Whether a fit with this graph weight centres its columns (``Σ_i d_i f(x_i) = 0``)."""
        return self.centre_with_graph and lambda_intrinsic > 0

    def adds_labeled_prior(self, intrinsic_reg: float) -> bool:
        """Whether the decision is scaled and the labeled prior added, for a fit whose resolved
        ``intrinsic_reg`` is this (the centred hinges need a graph term)."""
        return self.labeled_prior and (self.squared or intrinsic_reg > 0)


def fit_rules(estimator) -> FitRules:
    """The :class:`FitRules` of a ``ManifoldMixin`` estimator with its current parameters.

    The classifiers' model switches are class attributes of ``SSLClassifierMixin``
    (``_zero_mean_targets``, ``_centre_decision``, ``_prior_decision``, all False for the
    regressors); the optional parameters are read where the contract declares them.
    """
    contract = fit_contract(estimator)
    if contract is None:
        raise TypeError(f"{type(estimator).__name__} declares no FitContract (_fit_contract)")
    loss = estimator._problem_loss()
    squared = contract.fit_path == "manifold" and isinstance(get_loss(loss), SquaredLoss)
    balanced = contract.balanced_targets and bool(estimator.balanced_targets)
    centring = contract.centring and bool(estimator.centring)
    zero_mean = bool(estimator._zero_mean_targets) and squared
    coding = ("balanced" if balanced else "zero_mean") if zero_mean else "plus_minus"
    prior = bool(estimator._prior_decision) and not balanced
    return FitRules(
        loss=loss,
        squared=squared,
        target_coding=coding,
        centre_with_graph=bool(estimator._centre_decision) and (squared or centring),
        labeled_prior=prior and (bool(estimator._zero_mean_targets) if squared else centring),
        # SLapCVM's own fit has no intrinsic weight of this form
        intrinsic_reg=estimator.intrinsic_reg if contract.fit_path == "manifold" else 0.0,
        auto_intrinsic_factor=estimator._auto_intrinsic_factor,
    )


def labels_from_decision(classes, decision):
    """Class labels of decision values: the sign of one column, else the arg max."""
    decision = np.asarray(decision)
    if decision.shape[1] == 1:
        return classes[(decision[:, 0] > 0).astype(np.intp)]
    return classes[np.argmax(decision, axis=1)]
