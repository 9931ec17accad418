r"""Storage-fit learning (paper 003): a linear classifier on cluster-kernel virtual samples.

The semi-supervised part of the model is the feature map: a cluster-kernel transformer
(:mod:`semiscale.cluster_kernels`) is fitted on every training point, labeled and unlabeled,
within a memory budget, and maps each point to a virtual sample ``F(x)`` with
``F(x)ᵀF(x') = k̃(x, x')``, the cluster kernel (Proposition 1); a linear classifier on the
labeled virtual samples is then the kernel machine of the cluster kernel.
"""

from __future__ import annotations

import math
import time
from numbers import Real

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, _fit_context, clone
from sklearn.svm import LinearSVC
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from .._memory import MemoryBudgetError, check_fits, format_bytes, parse_memory_budget
from .._progress import log, stage
from .._random import RANDOM_STATE_CONSTRAINT, as_random_state
from .._validation import check_classification_targets, validate_X
from ._base import (
    UNLABELED_CONSTRAINT,
    FitContract,
    SSLClassifierMixin,
    _check_y_given,
    _column_or_1d_labels,
)
from ._contract import labels_from_decision

__all__ = ["StorageFitClassifier"]

#: The default classifier's ``C`` (measured, see :func:`default_classifier`).
DEFAULT_C = 1.0
#: Bytes of one liblinear ``feature_node`` (an int index and a double value, padded).
_LIBLINEAR_NODE_BYTES = 16
#: The most bytes one block of virtual samples and decision values holds (streamed
#: ``transduction_``, ``decision_function`` and ``predict``): the budget's eighth, at most this.
_BLOCK_BYTES = 8 * 1024**2


def default_transformer():
    """A fresh default transformer: ``NystromClusterKernel()`` (paper 003's NysCK)."""
    # imported here: the cluster kernels import the linear-algebra layer
    from ..cluster_kernels import NystromClusterKernel

    return NystromClusterKernel()


def default_classifier():
    r"""A fresh default classifier: ``LinearSVC(C=1.0)`` (liblinear's dual, squared hinge).

    The paper's linear SVM on the virtual samples, at scikit-learn's own defaults: the squared
    hinge :math:`\max(0, 1 - y f)^2` and ``C = 1``.  Proposition 1 holds for any loss (a
    linear model on ``F`` is a kernel model of the cluster kernel), and the virtual samples'
    rows have unit norm (``‖F(x)‖² = k̃(x, x) = 1``), so ``C`` has the same meaning on every
    data set.  Measured (``benchmarks/scripts/paper003_defaults.py``, NysCK's defaults, 10 %
    labels, 5 splits, mean AUC on the unlabeled rows over australian, german.numer, splice,
    svmguide3, fourclass and 3,000 rows of phishing): the squared hinge 0.8605 against 0.8507
    for the hinge at ``C = 1`` (higher on 4 of the 6 sets, and on the mean for 12 of the 15
    width × transfer maps tried); ``C = 0.1`` gave 0.8476, ``C = 10`` 0.8454.
    ``max_iter=10_000``: liblinear's dual coordinate descent may need more than its default
    1,000 passes.
    """
    return LinearSVC(C=DEFAULT_C, dual=True, max_iter=10_000)


def _with_own(component, params: dict):
    """A copy of ``component`` (the one given is never fitted) with ``params`` set where it
    has them at their unset value (None, or 0 for ``verbose``) and the value given is set."""
    own = component.get_params(deep=False)
    updates = {}
    for name, value in params.items():
        unset = 0 if name == "verbose" else None
        if name in own and own[name] is unset and value is not unset and value is not None:
            updates[name] = value
    return clone(component).set_params(**updates)


class StorageFitClassifier(SSLClassifierMixin, BaseEstimator):
    r"""A linear classifier on the virtual samples of a cluster kernel (paper 003).

    Hou, Zhang & Zhou (2017), storage-fit learning.  A cluster-kernel transformer is fitted
    on all ``n`` training points within ``memory_budget``, and maps them to virtual samples
    ``F`` (``n × k``) whose inner products are the cluster kernel,

    .. math::  \tilde K = F F^\top = \tilde D^{1/2}\, U \phi(\Sigma)\, U^\top \tilde D^{1/2},

    with :math:`L = D^{-1/2} K D^{-1/2} = U \Sigma U^\top` the normalized affinity of all
    points, :math:`\phi` the transfer function (poly-step by default) and
    :math:`\tilde D` the diagonal rescaling to a unit diagonal (the transformers' docstrings
    give the details).  By Proposition 1 a linear SVM on the labeled rows of ``F``,

    .. math::  \min_{w,\, b}\; \tfrac12 \|w\|^2 + C \sum_{i \le l}
               \ell\big(y_i (w^\top F_i + b)\big),

    is the SVM of the cluster kernel on the labeled points; every training point then gets
    ``w^\top F_i + b`` (``transduction_``), and a new point ``x`` the same through the
    transformer's extension ``F(x)`` (``transformer_.transform``: inductive ``predict``).
    The storage is the transformer's: it chooses its rank (and sample) from the budget, so
    the model is as large as the memory allows while using every unlabeled point.

    Any scikit-learn transformer and classifier can be given: the classifier's multiclass
    scheme is kept (``LinearSVC``: one-vs-rest), and ``decision_function`` is the
    classifier's.

    Parameters
    ----------
    transformer : transformer or None, default=None
        Fitted on all training points with ``fit_transform(X, y)`` (``y`` with the unlabeled
        marker: a cluster kernel reads the number of labels from it, for the poly-step cut);
        None: ``NystromClusterKernel()``.  Its own ``unlabeled`` is replaced by this
        estimator's; its ``memory_budget``, ``random_state`` and ``verbose``, where left unset,
        by this estimator's.
    classifier : classifier or None, default=None
        Fitted on the labeled rows of the virtual samples; None: ``LinearSVC(C=1.0)``
        (liblinear's squared-hinge SVM, :func:`default_classifier`).  Its
        ``random_state``, where None, is this estimator's.
    memory_budget : int, str or None, default=None
        Largest working memory (bytes, or a string such as "400MB"); None = a quarter of the
        available memory.  Where the transformer's own is None it gets the budget less the
        classifier's part (the labeled rows, liblinear's copy, the decision values or a
        block of them), reserved before the transformer sizes its model, for the ``k`` it
        will choose in its share (a cluster kernel's own sizing; another transformer:
        ``k ≤ share / 8n``, or also ``(share / 16)^{1/2}`` with ``"streamed"``), so an
        impossible budget is refused before any large allocation; the classifier's part is
        checked again with the ``k`` chosen.
    virtual_samples : {"all", "streamed"}, default="all"
        ``"all"``: ``transformer.fit_transform(X, y)``, the ``n × k`` virtual samples of every
        training point at once, the classifier on their labeled rows.  ``"streamed"``:
        ``transformer.fit(X, y)``, then ``transform`` of the labeled rows for the classifier
        and of the others a block at a time for ``transduction_``: never ``n × k`` at once,
        so ClusK+RandSub (``ClusterKernel(max_samples="budget")``, sized by ``fit`` without
        ``F``) fits a larger subsample, and is inductive as in paper 003.  The same model
        for ``ClusterKernel`` and ``NystromClusterKernel``, whose ``transform`` reproduces
        the fitted rows (to rounding); for ``StochasticClusterKernel`` the rows are the
        Nyström extension of its eigenvectors, not its fitted iterate's rows (they agree as
        ``n_iter`` grows).
    random_state : int, RandomState, Generator or None, default=None
        Handed to the transformer and the classifier where their own is None (the
        transformer's samples and random features; liblinear's order of coordinates).
    verbose : int or bool, default=0
        0: silent; 1: progress bars and a line per stage (graph, kernel, solve) on stderr;
        2: also a line per iteration (of CG, of Newton, of the core set, per fit of a
        search).  True means 1 (:mod:`semiscale._progress`).
    unlabeled : int, float, str or None, default=-1
        Marker of unlabeled points in ``y`` (None: every point is labeled).  A missing label
        (``None``, ``NaN``, pandas' ``pd.NA``) marks an unlabeled point too; with
        ``unlabeled=None`` it is refused.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The classes seen among the labeled points.
    transformer_ : transformer
        The transformer fitted on all training points.
    classifier_ : classifier
        The classifier fitted on the labeled virtual samples.
    n_components_ : int
        Columns ``k`` of the virtual samples.
    labeled_indices_ : ndarray of shape (n_labeled,)
        Rows of the training ``X`` that are labeled.
    n_labeled_ : int
    transduction_ : ndarray of shape (n_samples,)
        The classifier's labels of every training point's virtual sample.
    transformer_budget_ : int or None
        Bytes handed to the transformer as its ``memory_budget`` (the budget less the
        classifier's reserved part); None where the transformer kept its own.
    timings_ : dict
        Seconds of the transformer (``"transformer"``; with ``"streamed"`` its ``fit`` and
        the labeled rows' ``transform``), of the classifier (``"classifier"``), of
        ``transduction_`` and in total.
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Only when ``X`` has string column names.

    See Also
    --------
    semiscale.cluster_kernels.NystromClusterKernel : NysCK, the default transformer.
    semiscale.cluster_kernels.StochasticClusterKernel : SoCK.
    semiscale.cluster_kernels.ClusterKernel : The exact cluster kernel (ClusK, and RandSub).
    TSVMClassifier : The transductive SVM baseline.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.kernel_approximation import Nystroem
    >>> from semiscale.datasets import make_two_moons
    >>> X, y = make_two_moons(200, noise=0.1, random_state=0)
    >>> y_ssl = np.full_like(y, -1)
    >>> y_ssl[:10] = y[:10]
    >>> model = StorageFitClassifier(transformer=Nystroem(n_components=50), random_state=0)
    >>> model.fit(X, y_ssl).transduction_.shape
    (200,)
    """

    _parameter_constraints: dict = {
        "transformer": [HasMethods(["fit_transform", "transform"]), None],
        "classifier": [HasMethods(["fit", "predict"]), None],
        "memory_budget": [Interval(Real, 0, None, closed="neither"), str, None],
        "virtual_samples": [StrOptions({"all", "streamed"})],
        "random_state": RANDOM_STATE_CONSTRAINT,
        "verbose": ["verbose"],
        **UNLABELED_CONSTRAINT,
    }
    _fit_contract = FitContract(fit_path="feature-machine", expansion="support")

    def __init__(
        self,
        *,
        transformer=None,
        classifier=None,
        memory_budget=None,
        virtual_samples="all",
        random_state=None,
        verbose=0,
        unlabeled=-1,
    ):
        self.transformer = transformer
        self.classifier = classifier
        self.memory_budget = memory_budget
        self.virtual_samples = virtual_samples
        self.random_state = random_state
        self.verbose = verbose
        self.unlabeled = unlabeled

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True  # as far as the transformer takes it (NysCK does)
        tags.target_tags.required = True
        return tags

    def _transformer_to_fit(self, X, n_labeled, n_columns):
        transformer = default_transformer() if self.transformer is None else self.transformer
        own = transformer.get_params(deep=False)
        if "unlabeled" in own:
            # it reads y with this estimator's marker (None: missing labels only)
            transformer = clone(transformer).set_params(unlabeled=self.unlabeled)
        share = None
        if "memory_budget" in own and own["memory_budget"] is None:
            share = self._transformer_share(transformer, X, n_labeled, n_columns)
        self.transformer_budget_ = share
        return _with_own(
            transformer,
            {
                "memory_budget": share,
                "random_state": as_random_state(self.random_state),
                "verbose": self.verbose,
            },
        )

    def _classifier_parts(self, n, n_labeled, k, n_columns):
        """The classifier's arrays (name -> bytes) beside the transformer's, for ``k`` columns."""
        parts = {
            f"the {n_labeled}x{k} labeled virtual samples": 8 * n_labeled * k,
            "liblinear's copy of them": _LIBLINEAR_NODE_BYTES * n_labeled * (k + 2),
        }
        if self.virtual_samples == "all":
            parts[f"the {n}x{n_columns} decision values"] = 8 * n * n_columns
        else:
            rows = self._block_rows(n, k, n_columns)
            parts[f"a block of {rows} rows' virtual samples and decision values"] = (
                8 * rows * (k + n_columns)
            )
            parts[f"the {n} labels"] = 8 * n
        return parts

    def _block_rows(self, n, k, n_columns):
        """Rows of one block of virtual samples (and their decision values) at a time."""
        block = min(_BLOCK_BYTES, parse_memory_budget(self.memory_budget) // 8)
        return int(max(1, min(n, block // (8 * (k + n_columns)))))

    def _rank_bound(self, transformer, X, n_labeled, share):
        """The most columns ``k`` the transformer fitted within ``share`` bytes returns.

        A cluster kernel says it (``_columns_for_budget``: its own sizing, nothing allocated);
        another transformer with a budget is bounded by ``k ≤ share / 8n`` (its ``n × k``
        ``F`` within its budget) or, for ``fit`` alone, ``k ≤ (share / 16)^{1/2}``.
        """
        n, d = X.shape
        if hasattr(transformer, "_columns_for_budget"):
            return int(
                transformer._columns_for_budget(
                    n,
                    d,
                    n_labeled,
                    share,
                    sparse=sp.issparse(X),
                    want_F=self.virtual_samples == "all",
                    nnz=X.nnz if sp.issparse(X) else None,
                )
            )
        k = share // (8 * n)
        if self.virtual_samples == "streamed":
            k = max(k, math.isqrt(share // 16))
        return int(min(n, k))

    def _transformer_share(self, transformer, X, n_labeled, n_columns):
        """The largest share of the budget that leaves the classifier's part for its ``k``."""
        budget = parse_memory_budget(self.memory_budget)
        n = X.shape[0]

        def total(share):
            k = self._rank_bound(transformer, X, n_labeled, share)
            return share + sum(self._classifier_parts(n, n_labeled, k, n_columns).values())

        lo, hi = 0, budget  # k, hence the total, grows with the share
        while lo < hi:
            mid = (lo + hi + 1) // 2
            lo, hi = (mid, hi) if total(mid) <= budget else (lo, mid - 1)
        return max(lo, 1)

    def _classifier_to_fit(self):
        classifier = default_classifier() if self.classifier is None else self.classifier
        # (a Generator as a RandomState on its bit generator: scikit-learn's classifiers take it)
        return _with_own(classifier, {"random_state": as_random_state(self.random_state)})

    # prefer_skip_nested_validation=False: the transformer and classifier check their own
    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y):
        """Fit the transformer on all points, then the classifier on the labeled ones.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            All training points, labeled and unlabeled.
        y : array-like of shape (n_samples,)
            Labels; ``unlabeled`` (default -1) marks an unlabeled point.

        Returns
        -------
        self

        Raises
        ------
        ValueError
            No labeled point, or a single labeled class (naming the marker).
        MemoryBudgetError
            From the transformer, before its large arrays, when ``memory_budget`` cannot hold
            its smallest model; or after it, when the classifier's copy of the labeled virtual
            samples does not fit beside them.
        """
        start = time.perf_counter()
        X = validate_X(self, X, reset=True, min_samples=2)
        _check_y_given(self, y)
        y = _column_or_1d_labels(y)
        targets = check_classification_targets(y, X.shape[0], unlabeled=self.unlabeled)
        n = X.shape[0]
        labeled = np.flatnonzero(targets.labeled)
        self.classes_ = targets.classes
        n_columns = 1 if self.classes_.size == 2 else self.classes_.size
        transformer = self._transformer_to_fit(X, labeled.size, n_columns)
        name = type(transformer).__name__
        with stage(f"[{type(self).__name__}] {name} on {n} points", self.verbose):
            try:
                if self.virtual_samples == "all":
                    F = np.asarray(transformer.fit_transform(X, y), dtype=np.float64)
                    F_labeled = None
                else:
                    transformer.fit(X, y)
                    F = None
                    F_labeled = np.asarray(transformer.transform(X[labeled]), dtype=np.float64)
            except MemoryBudgetError as refused:
                if self.transformer_budget_ is None:
                    raise
                raise MemoryBudgetError(
                    f"{refused} [{type(self).__name__} handed the transformer "
                    f"{format_bytes(self.transformer_budget_)} of its memory_budget="
                    f"{format_bytes(parse_memory_budget(self.memory_budget))}, reserving the "
                    "rest for the classifier's labeled rows and decision values]"
                ) from refused
        self.transformer_ = transformer
        timings = {"transformer": time.perf_counter() - start}
        k = (F if F is not None else F_labeled).shape[1]
        parts = self._classifier_parts(n, labeled.size, k, n_columns)
        if F is not None:
            parts = {f"the {n}x{k} virtual samples (float64)": 8 * n * k, **parts}
        check_fits(
            parts,
            self.memory_budget,
            what=f"{type(self).__name__}'s classifier on {labeled.size} labeled rows of {name}",
        )
        tic = time.perf_counter()
        classifier = self._classifier_to_fit()
        if F_labeled is None:
            F_labeled = F[labeled]
        self.classifier_ = classifier.fit(F_labeled, self.classes_[targets.codes[labeled]])
        del F_labeled
        timings["classifier"] = time.perf_counter() - tic
        self.n_components_ = int(k)
        self.labeled_indices_ = labeled
        self.n_labeled_ = int(labeled.size)
        tic = time.perf_counter()
        self.transduction_ = self._labels(F) if F is not None else self._blocks(X, self._labels)
        timings["transduction"] = time.perf_counter() - tic
        timings["total"] = time.perf_counter() - start
        self.timings_ = timings
        n_iter = getattr(self.classifier_, "n_iter_", None)
        log(
            f"[{type(self).__name__}] {type(self.classifier_).__name__} on {labeled.size} "
            f"labeled rows of {k} features"
            + ("" if n_iter is None else f": {int(np.max(n_iter))} iterations"),
            self.verbose,
            level=2,
        )
        log(
            f"[{type(self).__name__}] n={n} labeled={labeled.size} classes={self.classes_.size}"
            f": {name} k={k} ({format_bytes(8 * n * k)} of virtual samples) "
            f"{timings['transformer']:.3f}s, classifier {timings['classifier']:.3f}s",
            self.verbose,
        )
        return self

    def _labels(self, F):
        if hasattr(self.classifier_, "decision_function"):
            decision = np.asarray(self.classifier_.decision_function(F), dtype=np.float64)
            return labels_from_decision(self.classes_, decision.reshape(F.shape[0], -1))
        return self.classifier_.predict(F)

    def _blocks(self, X, compute):
        """``compute`` of the virtual samples of ``X`` (validated), a block of rows at a time."""
        n_columns = 1 if self.classes_.size == 2 else self.classes_.size
        rows = self._block_rows(X.shape[0], self.n_components_, n_columns)
        parts = []
        for begin in range(0, X.shape[0], rows):
            F = np.asarray(self.transformer_.transform(X[begin : begin + rows]), dtype=np.float64)
            parts.append(np.asarray(compute(F)))
        return parts[0] if len(parts) == 1 else np.concatenate(parts)

    def _decision(self, F):
        return self.classifier_.decision_function(F)

    def _checked(self, X):
        check_is_fitted(self, "classifier_")
        return validate_X(self, X, reset=False)

    def decision_function(self, X):
        """The classifier's decision values at the virtual samples of ``X``.

        Parameters
        ----------
        X : array-like of shape (n_queries, n_features)

        Returns
        -------
        ndarray of shape (n_queries,) or (n_queries, n_classes)
            Two classes: ``wᵀF(x) + b``, positive means ``classes_[1]``; more: the
            classifier's columns (LinearSVC: one per class, one-vs-rest).
        """
        # the virtual samples of a block of rows at a time (memory_budget's eighth, 8 MiB at most)
        return self._blocks(self._checked(X), self._decision)

    def predict(self, X):
        """Class labels of new (or training) points.

        Parameters
        ----------
        X : array-like of shape (n_queries, n_features)

        Returns
        -------
        ndarray of shape (n_queries,)
        """
        return self._blocks(self._checked(X), self._labels)
