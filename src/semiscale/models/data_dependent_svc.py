r"""A support vector machine on a kernel learned from all points (paper 002 §5.1).

The semi-supervised part of the model is the kernel: it is fitted on every training point,
labeled and unlabeled (:meth:`semiscale.kernels.Kernel.fit`), and scikit-learn's libsvm
``SVC(kernel="precomputed")`` is then trained on its Gram matrix of the labeled points only.
Nothing here is specific to :class:`~semiscale.kernels.DataDependentKernel`: any semiscale kernel
works (a fixed one makes this an ordinary SVM on the labeled points).
"""

from __future__ import annotations

import time
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, _fit_context, clone
from sklearn.svm import SVC
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.class_weight import compute_class_weight
from sklearn.utils.validation import check_is_fitted

from .._memory import check_fits
from .._progress import log, stage
from .._random import RANDOM_STATE_CONSTRAINT, as_random_state
from .._validation import check_classification_targets, validate_X
from ..linalg.blocked import kernel_matrix
from ._base import (
    UNLABELED_CONSTRAINT,
    FitContract,
    SSLClassifierMixin,
    _check_y_given,
    _column_or_1d_labels,
)
from ._defaults import DEFAULT_KERNEL as DEFAULT_RBF
from ._defaults import KERNEL_CONSTRAINT, kernel_reading_marker, kernel_to_fit

__all__ = ["DataDependentSVC"]

#: Bytes per labeled point of libsvm's own vectors in one fit (gradient, its bar, alphas, the
#: status and active-set arrays, the targets, ``Q``'s diagonal: about ten 8-byte values).
_LIBSVM_BYTES_PER_POINT = 80


def _default_kernel():
    # imported here: the data-dependent kernel imports the graph and solver layers
    from ..kernels import DataDependentKernel

    return DataDependentKernel()


class DataDependentSVC(SSLClassifierMixin, BaseEstimator):
    r"""Support vector machine on a kernel fitted on labeled and unlabeled points (paper 002).

    Lever, Diethe & Shawe-Taylor (2012), §5.1.  The kernel of the LapSVM (Sindhwani et al.
    2005, the paper's eq. 4),

    .. math::  \tilde K(x, x') = K(x, x') - \eta\, k_x^\top (I + \eta Q K)^{-1} Q\, k_{x'},

    deforms a base kernel ``K`` along a regularizer ``Q`` of the graph on all ``n`` training
    points; its efficient form (eq. 6) measures functions on ``n̂`` landmarks only,

    .. math::  \tilde K(x, x') = K(x, x') - \eta\, \hat k_x^\top
               (I_{\hat n} + \eta \hat Q \hat K)^{-1} \hat Q\, \hat k_{x'},
               \qquad \hat Q = (Q^+|_{\text{landmarks}})^+ ,

    (:class:`~semiscale.kernels.DataDependentKernel`).  The recipe is the paper's: fit the
    kernel on every training point (``kernel_ = kernel.fit(X, y)``, the unlabeled ones shape
    it), then train a standard soft-margin SVM,

    .. math::  \min_{f \in \mathcal H_{\tilde K},\, b}\;
               \tfrac12 \|f\|^2_{\tilde K} + C \sum_{i \le l} w_{y_i}
               \max(0, 1 - y_i (f(x_i) + b)),

    on the ``l`` labeled points only, by libsvm on the precomputed Gram matrix
    ``K̃(X_l, X_l)`` (scikit-learn's ``SVC(kernel="precomputed")``).  New points are evaluated
    through ``K̃(X_new, X_l)`` in row blocks under ``memory_budget`` (the kernel's own blocks,
    sized by the array-operations layer); the training points are among them
    (``transduction_``).  This is the same model as
    ``SVC(kernel="precomputed").fit(kernel_(X_l, X_l), y_l)`` and as ``SVC(kernel=kernel_)``
    (a callable), and with a fixed kernel it is ``SVC`` on the labeled rows
    (``tests/test_data_dependent_svc.py``).

    More than two classes: one-vs-rest, one binary SVC per class on the same Gram matrix
    (class ``c`` against the others, labels ``c`` → 1, others → 0) and the arg max of their
    decision values, as scikit-learn's ``OneVsRestClassifier(SVC(kernel="precomputed"))``
    (equal to it, tested).  Written here rather than wrapped because ``class_weight`` names
    the original classes, which the wrapper's 0/1 problems cannot see (here each labeled
    point's class weight is its sample weight in every problem), and because one kernel block
    of new points serves every class.  One-vs-rest rather than libsvm's one-vs-one: the paper's
    tasks are binary, and one-vs-rest is the multiclass scheme of the other semiscale
    classifiers (one decision column per class).

    Parameters
    ----------
    kernel : Kernel, {"rbf", "laplacian", "linear", "poly"} or None, default=None
        The kernel, fitted on all training points by ``kernel.fit(X, y, laplacian=...,
        random_state=...)``; None: ``DataDependentKernel()`` (paper 002's kernel at its
        defaults).  A name is a fixed kernel: ``"rbf"`` is ``RBF(gamma="median")`` (the median
        heuristic's width, as the regressors' default; the default ``DataDependentKernel``'s
        base is 4 times narrower in γ), so ``kernel="rbf"`` is the paper's plain RBF SVM on the
        labeled points; the others have their class defaults.  A kernel with an
        ``unlabeled`` parameter reads ``y`` with this estimator's marker.
    C : float, default=1.0
        Weight of the labeled points' hinge losses against ``‖f‖²`` (``SVC``'s ``C``); > 0.
    class_weight : dict, "balanced" or None, default=None
        Weight ``w_c`` of each class's losses (``C·w_c``).  ``"balanced"``: ``l / (n_classes
        · l_c)`` from the labeled counts.  With more than two classes each labeled point
        keeps its own class's weight in every one-vs-rest problem.
    tol : float, default=1e-3
        libsvm's stopping tolerance (of its KKT conditions); > 0.
    max_iter : int or None, default=None
        libsvm's iteration cap per binary problem (None: no cap).
    memory_budget : int, str or None, default=None
        Largest working memory (bytes, or a string such as "512MiB"); None = a quarter of the
        available memory.  Bounds the labeled points' Gram matrix with libsvm's cache and
        vectors (checked before the kernel is fitted: ``MemoryBudgetError``), the kernel
        blocks of ``predict`` and ``decision_function``, and the kernel's fit when the kernel
        has a ``memory_budget`` of its own left at None.
    random_state : int, RandomState, Generator or None, default=None
        Handed to the kernel's fit (its landmarks, its graph search, a data-dependent width);
        libsvm's fit is deterministic.
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
    kernel_ : Kernel
        The kernel fitted on all training points.
    X_fit_ : {ndarray, sparse matrix} of shape (n_labeled, n_features)
        The labeled training points (the columns of ``K̃(X_new, X_fit_)``), in the dtype of
        ``X``; the kernel is evaluated on them in float64.
    labeled_indices_ : ndarray of shape (n_labeled,)
        Their rows in the training ``X``.
    estimators_ : list of sklearn.svm.SVC
        The fitted libsvm machines on the precomputed Gram matrix: one for two classes (on the
        original labels), one per class (one-vs-rest) otherwise.
    support_ : ndarray
        Rows of the training ``X`` that are a support vector of some machine (sorted).
    n_iter_ : ndarray of shape (n_machines,)
        libsvm's iterations of each machine.
    transduction_ : ndarray of shape (n_samples,)
        The machines' labels of every training point, labeled ones included (a soft margin
        may leave a labeled point on the wrong side).
    n_labeled_ : int
        Number of labeled training points.
    timings_ : dict
        Seconds of the kernel fit (``"kernel"``), of the Gram matrix and libsvm (``"svm"``),
        of ``transduction_`` (``"transduction"``) and in total.
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Only when ``X`` has string column names.

    See Also
    --------
    semiscale.kernels.DataDependentKernel : The paper's kernel (the default).
    LapSVC : The LapSVM fitted directly, on the full graph (the kernel of eq. 4 is its kernel).
    sklearn.svm.SVC : The machine trained on the labeled points.

    Examples
    --------
    >>> import numpy as np
    >>> from semiscale.datasets import make_two_moons
    >>> from semiscale.kernels import RBF
    >>> X, y = make_two_moons(200, noise=0.1, random_state=0)
    >>> y_ssl = np.full_like(y, -1)
    >>> y_ssl[:10] = y[:10]
    >>> model = DataDependentSVC(kernel=RBF(gamma=2.0), C=10.0).fit(X, y_ssl)
    >>> model.transduction_.shape
    (200,)
    """

    _parameter_constraints: dict = {
        **KERNEL_CONSTRAINT,
        "C": [Interval(Real, 0, None, closed="neither")],
        "class_weight": [dict, StrOptions({"balanced"}), None],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, 1, None, closed="left"), None],
        "memory_budget": [Interval(Real, 0, None, closed="neither"), str, None],
        "random_state": RANDOM_STATE_CONSTRAINT,
        "verbose": ["verbose"],
        **UNLABELED_CONSTRAINT,
    }
    _fit_contract = FitContract(fit_path="kernel-machine", expansion="support")

    def __init__(
        self,
        *,
        kernel=None,
        C=1.0,
        class_weight=None,
        tol=1e-3,
        max_iter=None,
        memory_budget=None,
        random_state=None,
        verbose=0,
        unlabeled=-1,
    ):
        self.kernel = kernel
        self.C = C
        self.class_weight = class_weight
        self.tol = tol
        self.max_iter = max_iter
        self.memory_budget = memory_budget
        self.random_state = random_state
        self.verbose = verbose
        self.unlabeled = unlabeled

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True  # as far as the kernel takes it (the built-in ones do)
        tags.target_tags.required = True
        return tags

    # ------------------------------------------------------------------------------ fit
    def _kernel_to_fit(self):
        """The kernel to fit: it reads ``y`` with the estimator's ``unlabeled`` marker
        (:func:`~semiscale.models._defaults.kernel_reading_marker`), and takes the estimator's
        budget where its own is None."""
        kernel = (
            _default_kernel() if self.kernel is None else kernel_to_fit(self.kernel, DEFAULT_RBF)
        )
        kernel = kernel_reading_marker(kernel, self)
        if kernel.get_params(deep=False).get("memory_budget", 0) is None and (
            self.memory_budget is not None
        ):
            kernel = clone(kernel).set_params(memory_budget=self.memory_budget)
        return kernel

    def _svc(self):
        return SVC(
            kernel="precomputed",
            C=self.C,
            tol=self.tol,
            max_iter=-1 if self.max_iter is None else self.max_iter,
        )

    # prefer_skip_nested_validation=False: the kernel fitted inside checks its own parameters
    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y, laplacian=None):
        """Fit the kernel on all points, then the SVM on the labeled ones.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            All training points, labeled and unlabeled.
        y : array-like of shape (n_samples,)
            Labels; ``unlabeled`` (default -1) marks an unlabeled point.
        laplacian : sparse matrix of shape (n_samples, n_samples), optional
            A graph Laplacian on ``X``, handed to the kernel's fit (a kernel that learns from
            a graph uses it instead of building its own; a fixed kernel ignores it).

        Returns
        -------
        self

        Raises
        ------
        ValueError
            No labeled point, or a single labeled class (naming the marker).
        MemoryBudgetError
            Before the kernel is fitted, when ``memory_budget`` cannot hold the labeled
            points' Gram matrix, libsvm's cache and vectors and the training decision values.
        """
        start = time.perf_counter()
        X = validate_X(self, X, reset=True, min_samples=2)
        _check_y_given(self, y)
        y = _column_or_1d_labels(y)
        targets = check_classification_targets(y, X.shape[0], unlabeled=self.unlabeled)
        n, n_classes = X.shape[0], targets.classes.shape[0]
        labeled = np.flatnonzero(targets.labeled)
        n_labeled = labeled.size
        n_columns = 1 if n_classes == 2 else n_classes
        check_fits(
            {
                f"the labeled points' {n_labeled}x{n_labeled} Gram matrix (float64)": 8
                * n_labeled**2,
                "libsvm's kernel cache (float32) and vectors": 4 * n_labeled**2
                + _LIBSVM_BYTES_PER_POINT * n_labeled,
                f"the {n}x{n_columns} decision values of the training points": 8 * n * n_columns,
            },
            self.memory_budget,
            what=f"{type(self).__name__} on {n} points ({n_labeled} labeled)",
        )
        self.classes_ = targets.classes
        # the kernel works in float64 (libsvm does too): float32 data give the same model
        X64 = X.astype(np.float64, copy=False)
        tic = time.perf_counter()
        with stage(f"[{type(self).__name__}] kernel on {n} points", self.verbose):
            self.kernel_ = self._kernel_to_fit().fit(
                X64, y, laplacian=laplacian, random_state=as_random_state(self.random_state)
            )
        timings = {"kernel": time.perf_counter() - tic}
        tic = time.perf_counter()
        X_l = X64[labeled]
        gram = kernel_matrix(self.kernel_, X_l, None, self.memory_budget)
        codes = targets.codes[labeled]
        self.estimators_ = self._fit_machines(gram, codes)
        timings["svm"] = time.perf_counter() - tic
        self.X_fit_ = X[labeled]
        self.labeled_indices_ = labeled
        self.n_labeled_ = n_labeled
        self.support_ = labeled[np.unique(np.concatenate([m.support_ for m in self.estimators_]))]
        self.n_iter_ = np.concatenate([np.atleast_1d(m.n_iter_) for m in self.estimators_])
        tic = time.perf_counter()
        self.transduction_ = self._labels(self._decision(X64))
        timings["transduction"] = time.perf_counter() - tic
        timings["total"] = time.perf_counter() - start
        self.timings_ = timings
        log(
            f"[{type(self).__name__}] n={n} labeled={n_labeled} classes={n_classes}: "
            f"{self.support_.size} support vectors, kernel {timings['kernel']:.3f}s, "
            f"SVM {timings['svm']:.3f}s",
            self.verbose,
        )
        return self

    def _fit_machines(self, gram, codes):
        """libsvm on the Gram matrix: one machine for two classes, one per class otherwise."""
        n_classes = self.classes_.shape[0]
        weights = None
        if isinstance(self.class_weight, dict):
            known = set(self.classes_.tolist())
            unknown = [k for k in self.class_weight if k not in known]
            if unknown:
                raise ValueError(
                    f"class_weight names {unknown!r}, which are not classes of the labeled "
                    f"points ({sorted(known, key=str)!r}); give weights of those classes only"
                )
            weights = np.array([float(self.class_weight.get(c, 1.0)) for c in self.classes_])
        elif self.class_weight == "balanced":
            weights = compute_class_weight("balanced", classes=np.arange(n_classes), y=codes)
        if n_classes == 2:
            # the original two classes (0 → classes_[0], 1 → classes_[1]): exactly SVC's fit
            svc = self._svc().set_params(
                class_weight=None if weights is None else dict(enumerate(weights))
            )
            machines = [svc.fit(gram, codes)]
        else:
            machines = []
            for c in range(n_classes):
                svc = self._svc().fit(
                    gram,
                    (codes == c).astype(np.intp),
                    sample_weight=None if weights is None else weights[codes],
                )
                machines.append(svc)
        for c, machine in enumerate(machines):
            name = "binary" if n_classes == 2 else f"class {self.classes_[c]!r} against the rest"
            log(
                f"[{type(self).__name__}] SVC {name}: {int(np.sum(machine.n_iter_))} libsvm "
                f"iterations, {machine.support_.size} support vectors",
                self.verbose,
                level=2,
            )
        return machines

    # ------------------------------------------------------------------------ predict
    def _decision(self, X64):
        """Decision columns of float64 points: one per machine, from ``K̃(X, X_fit_)`` blocks."""
        X_l = self.X_fit_.astype(np.float64, copy=False)
        out = np.empty((X64.shape[0], len(self.estimators_)))
        for rows, K in self.kernel_.blocks(X64, X_l, self.memory_budget):
            for c, machine in enumerate(self.estimators_):
                out[rows, c] = machine.decision_function(K)
            del K  # released before the next block is computed
        return out

    def _labels(self, decision):
        if decision.shape[1] == 1:
            return self.classes_[(decision[:, 0] > 0).astype(np.intp)]
        # the first of equal maxima, as OneVsRestClassifier
        return self.classes_[np.argmax(decision, axis=1)]

    def decision_function(self, X):
        """Decision values of the SVM(s) at new (or training) points.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_queries, n_features)

        Returns
        -------
        ndarray of shape (n_queries,) or (n_queries, n_classes)
            Two classes: ``f(x) + b``, positive means ``classes_[1]`` (``SVC``'s).  More: one
            column per class of ``classes_``, its one-vs-rest machine's value.
        """
        decision = self._decision(self._check_predict_X(X))
        return decision[:, 0] if decision.shape[1] == 1 else decision

    def predict(self, X):
        """Class labels of new (or training) points: the sign, or the arg max of the columns.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_queries, n_features)

        Returns
        -------
        ndarray of shape (n_queries,)
        """
        return self._labels(self._decision(self._check_predict_X(X)))

    def _check_predict_X(self, X):
        check_is_fitted(self, "estimators_")
        return validate_X(self, X, reset=False).astype(np.float64, copy=False)
