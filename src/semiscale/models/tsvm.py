r"""The transductive support vector machine of Joachims (1999), by label switching.

Paper 003's baseline TSVM, and with ``max_unlabeled`` its TSVM+RandSub: the machine is trained on
all labeled points and a random sample of the unlabeled ones, as large as the memory budget
allows; the other points are labeled inductively by the final machine.  Each training round is
scikit-learn's libsvm (``SVC``) for a kernel, or liblinear (``LinearSVC``) for the linear kernel.
"""

from __future__ import annotations

import time
import warnings
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, _fit_context
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import SVC, LinearSVC
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from .._memory import check_fits, format_bytes, parse_memory_budget
from .._progress import log, stage
from .._random import RANDOM_STATE_CONSTRAINT, as_random_state, check_random_state
from .._validation import check_classification_targets, validate_X
from ..cluster_kernels._sizing import heuristic_bytes
from ..kernels import Linear
from ..linalg.blocked import kernel_matrix
from ..linalg.ops import get_ops
from ._base import (
    UNLABELED_CONSTRAINT,
    FitContract,
    SSLClassifierMixin,
    _check_y_given,
    _column_or_1d_labels,
)
from ._contract import labels_from_decision
from ._defaults import DEFAULT_KERNEL as DEFAULT_RBF
from ._defaults import KERNEL_CONSTRAINT, kernel_reading_marker, kernel_to_fit
from ._label_switching import switch_labels, switchable_pairs

__all__ = ["TSVMClassifier"]

#: Default final weight ``C*`` of the unlabeled points' losses: a tenth of a labeled point's at
#: the default ``C = 1`` (with 10 % labels the unlabeled points then weigh about as much in all
#: as the labeled ones, SVMlin's balance).  Measured (``benchmarks/scripts/paper003_defaults.py``:
#: 10 % labels, 5 splits, AUC on the unlabeled rows, australian, german.numer, splice,
#: svmguide3, fourclass, 3,000 rows of phishing): 0.8365 mean against 0.8183 with ``C* = 1`` at
#: the default width and ``C = 1``, higher on all 6 sets, and on the mean at each of the 6
#: widths × ``C`` tried.
DEFAULT_C_UNLABELED = 0.1
#: Bytes per training point of libsvm's own vectors in one fit (gradient, its bar, alphas, the
#: status and active-set arrays, the targets, Q's diagonal: about ten 8-byte values), as
#: DataDependentSVC counts them.
_LIBSVM_BYTES_PER_POINT = 80
#: libsvm's kernel cache in MiB (``SVC(cache_size=...)``): on a precomputed Gram matrix a row is
#: a lookup, so a large cache buys nothing (a 3,000-point fit took 0.078 s with 1 MiB and 0.112 s
#: with scikit-learn's default 200 MiB); libsvm keeps at least two rows whatever it is given.
_LIBSVM_CACHE_MIB = 1
#: Bytes of one liblinear ``feature_node`` (an int index and a double value, padded).
_LIBLINEAR_NODE_BYTES = 16
_MIB = 2**20
#: The kernel blocks' working memory in a fit (the Gram matrix's and the training points'
#: decision values' temporaries), at most an eighth of the budget: two of the array layer's
#: 8 MiB stream blocks, one of output rows and one of temporaries.
_KERNEL_BLOCK_BYTES = 16 * _MIB


def _row_values(X) -> float:
    """Stored values per row: the features of dense data, the mean non-zeros of sparse."""
    if sp.issparse(X):
        return X.nnz / max(X.shape[0], 1)
    return float(X.shape[1])


def _row_bytes(X) -> float:
    """Bytes per row of a float64 copy of rows of ``X``: 8 per feature when dense; a value and
    an int32 index per non-zero and a row pointer when sparse (CSR)."""
    if sp.issparse(X):
        return 12 * _row_values(X) + 8
    return 8.0 * X.shape[1]


class TSVMClassifier(SSLClassifierMixin, BaseEstimator):
    r"""Transductive SVM by label switching (Joachims 1999), with TSVM+RandSub (paper 003).

    The machine minimises over the labels :math:`y^*_j` of the ``u`` unlabeled points and the
    function :math:`f(x) = w^\top \phi(x) + b`

    .. math::  \tfrac12 \|w\|^2 + C \sum_{i \le l} \xi_i
               + C^*_- \sum_{j:\, y^*_j = -1} \xi^*_j + C^*_+ \sum_{j:\, y^*_j = +1} \xi^*_j ,
               \qquad \xi = \max(0,\, 1 - y f(x)),

    under the class-ratio constraint that ``num₊ = round(r·u)`` unlabeled points are positive
    (``r``: ``positive_fraction``, or the positive share of the labeled points).  Joachims'
    algorithm: train on the labeled points; label the ``num₊`` unlabeled points of largest
    ``f`` positive, the others negative; then, starting from :math:`C^*_- = 10^{-5}` and
    :math:`C^*_+ = 10^{-5}\, \text{num}_+ / (u - \text{num}_+)`, retrain with these weights
    and switch the labels of a positive ``i`` and a negative ``j`` with
    :math:`\xi^*_i > 0,\ \xi^*_j > 0,\ \xi^*_i + \xi^*_j > 2` (each switch lowers the
    objective and keeps ``num₊``) until no such pair is left, then double both weights (capped
    at ``C_unlabeled``) and repeat, until both equal ``C_unlabeled``.  One switching round
    here switches every such pair at once, pairing the positives and the negatives in
    decreasing order of :math:`\xi^*` (the "multiple switching" of Sindhwani & Keerthi 2006,
    which Joachims' one pair per retraining becomes when one pair is taken at a time): each
    switched pair still has :math:`\xi^*_i + \xi^*_j > 2`, and a round costs one retraining
    however many pairs it switches.  ``max_iter`` bounds the rounds at each weight (a
    ``ConvergenceWarning`` says when it stopped them), and a switch back to a labeling already
    tried at the weight ends it (a cycle: libsvm's tolerance, not the objective, decided it).
    The final labels of the unlabeled training points keep the ratio (``imputed_positive_``);
    the classes of every point are then the sign of the final machine (``transduction_``,
    ``predict``).

    Each training is scikit-learn's libsvm ``SVC(kernel="precomputed")`` on the Gram matrix of
    the training points, computed once (per-point weights as ``sample_weight``; the slacks of
    a round are one matrix-vector product with it), or liblinear's ``LinearSVC(loss="hinge")``
    for the linear kernel (whose intercept is penalised as liblinear's always is).  More than
    two classes: one TSVM per class against the rest, each with its class's labeled share as
    ``r``, and the arg max of their decision values.

    **TSVM+RandSub** (``max_unlabeled``): the machine is trained on the labeled points and
    ``max_unlabeled`` unlabeled points drawn at random (``random_state``); ``"budget"`` takes
    the largest number that fits ``memory_budget``.  The count is what a fit holds at once with
    ``m`` training points of ``d`` stored values: the float64 copy of the training rows
    (``8md``; ``12`` bytes per non-zero and ``8`` per row for sparse data), their ``m × m``
    float64 Gram matrix (``8m²``: a retraining then computes no kernel value), libsvm's kernel
    cache (1 MiB, or two rows) and per-point vectors (``80m``), the targets, weights and slacks
    (``24m``), the decision values of all ``n`` points and the kernel blocks' temporaries (16
    MiB, at most an eighth of the budget); for the linear kernel, liblinear's copy of the rows
    (``16m(d + 2)``) instead of the Gram matrix.  An impossible budget, or one too small for
    ``max_unlabeled`` points, is refused before anything large is allocated.

    Parameters
    ----------
    kernel : Kernel, {"rbf", "laplacian", "linear", "poly"} or None, default=None
        The kernel; None and ``"rbf"``: ``RBF(gamma="median")`` (the median heuristic's width,
        resolved on all training points).  ``"linear"`` (or a ``Linear()``) trains liblinear.
    C : float, default=1.0
        Weight ``C`` of the labeled points' hinge losses; > 0.
    C_unlabeled : float, default=0.1
        Final weight ``C*`` of the unlabeled points' hinge losses (Joachims' ``C*``); > 0.
        The default, a tenth of the default ``C``, was measured (:data:`DEFAULT_C_UNLABELED`).
    positive_fraction : float or None, default=None
        Share ``r`` of the unlabeled points labeled ``classes_[1]`` (two classes only); None:
        the labeled share.
    max_unlabeled : int, "budget" or None, default=None
        Unlabeled points the machine is trained on (TSVM+RandSub): None all of them; an int at
        most that many, drawn at random; ``"budget"`` as many as ``memory_budget`` holds.
    tol : float, default=1e-3
        libsvm's (and liblinear's) stopping tolerance; > 0.
    max_iter : int, default=50
        Switching rounds (retrainings) at most per unlabeled weight; a ``ConvergenceWarning``
        says when a weight stopped on it with pairs left to switch.
    memory_budget : int, str or None, default=None
        Largest working memory (bytes, or a string such as "400MB"); None = a quarter of the
        available memory.  Bounds a training (see above) and the kernel blocks of ``predict``
        and ``decision_function``.
    random_state : int, RandomState, Generator or None, default=None
        Draws the unlabeled sample of TSVM+RandSub and the sample of the median heuristic, and
        seeds liblinear's order of coordinates (linear kernel).
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
        The kernel with its width resolved on the training points.
    X_fit_ : {ndarray, sparse matrix} of shape (n_support, n_features)
        The support vectors of the final machines (kernel) or of nothing (linear kernel: no
        row, the weights ``coef_`` are kept), in the dtype of ``X``.
    dual_coef_ : ndarray of shape (n_machines, n_support)
        ``y_i α_i`` of each final machine on the rows of ``X_fit_`` (zero where a row is not
        one of its support vectors); empty for the linear kernel.
    support_ : ndarray
        Rows of the training sample (``fit_indices_[support_]`` in ``X``) that are a support
        vector of some final machine, in the order of ``X_fit_``.
    coef_ : ndarray of shape (n_machines, n_features) or None
        The linear kernel's weights (None otherwise).
    intercept_ : ndarray of shape (n_machines,)
    fit_indices_ : ndarray of shape (n_fit,)
        Rows of the training ``X`` the machine was trained on: every labeled row, then the
        unlabeled sample.
    unlabeled_indices_ : ndarray of shape (n_unlabeled_fit,)
        The unlabeled ones among them.
    imputed_positive_ : ndarray of bool, shape (n_machines, n_unlabeled_fit)
        TSVM's final labels of those points, for each machine (True: ``classes_[1]`` for two
        classes, the machine's class for more): ``round(r·u)`` True per machine.
    n_unlabeled_fit_ : int
    n_iter_ : ndarray of shape (n_machines,)
        Trainings of each machine (the labeled one, then every switching round).
    n_switched_ : ndarray of shape (n_machines,)
        Label pairs switched by each machine.
    transduction_ : ndarray of shape (n_samples,)
        The final machines' labels of every training point.
    n_labeled_ : int
    estimated_bytes_ : int
        What the count above gives for the training actually run.
    timings_ : dict
        Seconds of the TSVM trainings (``"tsvm"``), of ``transduction_`` and in total.
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Only when ``X`` has string column names.

    See Also
    --------
    StorageFitClassifier : A linear SVM on cluster-kernel features (paper 003's method).
    DataDependentSVC : An SVM on the labeled points with a kernel learned from all points.
    sklearn.svm.SVC : The machine of each training round.

    Examples
    --------
    >>> import numpy as np
    >>> from semiscale.datasets import make_two_moons
    >>> from semiscale.kernels import RBF
    >>> X, y = make_two_moons(200, noise=0.1, random_state=0)
    >>> y_ssl = np.full_like(y, -1)
    >>> y_ssl[:10] = y[:10]
    >>> model = TSVMClassifier(kernel=RBF(gamma=2.0), C=10.0).fit(X, y_ssl)
    >>> int(model.imputed_positive_.sum()) == round((y_ssl[:10] == 1).mean() * 190)
    True
    """

    _parameter_constraints: dict = {
        **KERNEL_CONSTRAINT,
        "C": [Interval(Real, 0, None, closed="neither")],
        "C_unlabeled": [Interval(Real, 0, None, closed="neither")],
        "positive_fraction": [Interval(Real, 0, 1, closed="neither"), None],
        "max_unlabeled": [Interval(Integral, 0, None, closed="left"), StrOptions({"budget"}), None],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
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
        C_unlabeled=DEFAULT_C_UNLABELED,
        positive_fraction=None,
        max_unlabeled=None,
        tol=1e-3,
        max_iter=50,
        memory_budget=None,
        random_state=None,
        verbose=0,
        unlabeled=-1,
    ):
        self.kernel = kernel
        self.C = C
        self.C_unlabeled = C_unlabeled
        self.positive_fraction = positive_fraction
        self.max_unlabeled = max_unlabeled
        self.tol = tol
        self.max_iter = max_iter
        self.memory_budget = memory_budget
        self.random_state = random_state
        self.verbose = verbose
        self.unlabeled = unlabeled

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.target_tags.required = True
        return tags

    # --------------------------------------------------------------------------- memory
    def _training_bytes(self, m: int, X, n: int, n_machines: int, kernel) -> dict:
        """What one training on ``m`` rows of ``X`` holds at once (the class docstring's count);
        ``kernel`` need not be fitted yet (only whether it is linear counts)."""
        row_values = _row_values(X)
        parts = {f"the {m} training rows (float64)": m * _row_bytes(X)}
        if isinstance(kernel, Linear):
            parts["liblinear's copy of the rows"] = _LIBLINEAR_NODE_BYTES * m * (row_values + 2)
        else:
            parts[f"the {m}x{m} Gram matrix (float64)"] = 8 * m * m
            parts["libsvm's kernel cache and vectors"] = (
                max(_LIBSVM_CACHE_MIB * _MIB, 8 * m) + _LIBSVM_BYTES_PER_POINT * m
            )
        parts["weights and decision values"] = 8 * (3 * m + n * n_machines)
        parts["the kernel blocks' temporaries"] = self._block_bytes()
        return parts

    def _block_bytes(self) -> int:
        """Working memory of the fit's kernel blocks (:data:`_KERNEL_BLOCK_BYTES`, at most an
        eighth of ``memory_budget``)."""
        return min(_KERNEL_BLOCK_BYTES, parse_memory_budget(self.memory_budget) // 8)

    def _largest_sample(self, n_labeled, n_unlabeled, X, n, n_machines, kernel) -> int:
        """The most unlabeled points whose training fits ``memory_budget`` (may be < 0)."""
        budget = parse_memory_budget(self.memory_budget)

        def fits(u):
            parts = self._training_bytes(n_labeled + u, X, n, n_machines, kernel)
            return sum(parts.values()) <= budget

        if fits(n_unlabeled):
            return n_unlabeled
        lo, hi = -1, n_unlabeled  # fits(lo) is assumed, fits(hi) is False
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if mid >= 0 and fits(mid):
                lo = mid
            else:
                hi = mid
        return lo

    # ------------------------------------------------------------------------------ fit
    # prefer_skip_nested_validation=False: the kernel fitted inside checks its own parameters
    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y):
        """Train the TSVM on the labeled points and (a sample of) the unlabeled ones.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            All training points, labeled and unlabeled.
        y : array-like of shape (n_samples,)
            Labels; ``unlabeled`` (default -1) marks an unlabeled point.

        Returns
        -------
        self

        Raises
        ------
        ValueError
            No labeled point, a single labeled class, or ``positive_fraction`` with more than
            two classes.
        MemoryBudgetError
            Before the first training, when ``memory_budget`` cannot hold it.
        """
        start = time.perf_counter()
        X = validate_X(self, X, reset=True, min_samples=2)
        _check_y_given(self, y)
        y = _column_or_1d_labels(y)
        targets = check_classification_targets(y, X.shape[0], unlabeled=self.unlabeled)
        n, n_classes = X.shape[0], targets.classes.shape[0]
        if n_classes > 2 and self.positive_fraction is not None:
            raise ValueError(
                f"positive_fraction={self.positive_fraction!r} is the share of the second class "
                f"for two classes, but the labeled points have {n_classes}; leave it None (each "
                "one-vs-rest machine then keeps its class's labeled share)"
            )
        labeled = np.flatnonzero(targets.labeled)
        pool = np.flatnonzero(~targets.labeled)
        n_machines = 1 if n_classes == 2 else n_classes
        seed = self._seed = as_random_state(self.random_state)
        X64 = X.astype(np.float64, copy=False)
        kernel = kernel_to_fit(self.kernel, DEFAULT_RBF)
        # sizes first: the width heuristic's sample and the training are refused before either
        # allocates (the heuristic's distances are released before the training's arrays)
        gamma = getattr(kernel, "gamma", None)
        width = heuristic_bytes(n, X.shape[1], gamma) if isinstance(gamma, str) else 0
        check_fits(
            {f"the gamma={gamma!r} heuristic's sample distances": width},
            self.memory_budget,
            what=f"{type(self).__name__}'s kernel width",
            fix="pass the kernel a numeric gamma",
        )
        u = self._sample_size(labeled.size, pool.size, X, n, n_machines, kernel)
        parts = self._training_bytes(labeled.size + u, X, n, n_machines, kernel)
        check_fits(
            parts,
            self.memory_budget,
            what=f"{type(self).__name__} trained on {labeled.size} labeled and {u} unlabeled "
            "points",
            fix=""
            if self.max_unlabeled == "budget"
            else "set max_unlabeled='budget' (TSVM+RandSub: the largest sample that fits)",
        )
        self.kernel_ = kernel_reading_marker(kernel, self).fit(X64, y, random_state=seed)
        sample = pool
        if u < pool.size:
            sample = np.sort(check_random_state(seed).choice(pool, size=u, replace=False))
        fit_rows = np.concatenate([labeled, sample])
        self.estimated_bytes_ = max(int(sum(parts.values())), width)
        self.classes_ = targets.classes
        X_fit = X64[fit_rows]
        tic = time.perf_counter()
        if isinstance(self.kernel_, Linear):
            data = X_fit
        else:
            with stage(
                f"[{type(self).__name__}] Gram matrix of {fit_rows.size} points", self.verbose
            ):
                # the Gram matrix and one block of temporaries: what the count holds for them
                gram_bytes = 8 * fit_rows.size**2
                data = kernel_matrix(
                    self.kernel_, X_fit, None, gram_bytes + self._block_bytes() + 1
                )
        codes = targets.codes[labeled]
        machines, imputed, n_iter, n_switched = [], [], [], []
        for c in range(n_machines):
            y_l = np.where(codes == (1 if n_classes == 2 else c), 1.0, -1.0)
            if n_classes == 2 and self.positive_fraction is not None:
                r = float(self.positive_fraction)
            else:
                r = float(np.mean(y_l > 0))
            name = "binary" if n_classes == 2 else f"class {self.classes_[c]!r} against the rest"
            with stage(
                f"[{type(self).__name__}] TSVM {name} on {fit_rows.size} points", self.verbose
            ):
                (machine, y_u, fits, switched), first = self._tsvm(
                    data, y_l, int(round(r * u)), name
                )
                fits += first
            machines.append(machine)
            imputed.append(y_u > 0)
            n_iter.append(fits)
            n_switched.append(switched)
        self._keep_machines(machines, X[fit_rows])
        self.fit_indices_ = fit_rows
        self.unlabeled_indices_ = sample
        self.n_unlabeled_fit_ = int(u)
        self.imputed_positive_ = np.array(imputed, dtype=bool).reshape(n_machines, u)
        self.n_iter_ = np.array(n_iter)
        self.n_switched_ = np.array(n_switched)
        self.n_labeled_ = int(labeled.size)
        timings = {"tsvm": time.perf_counter() - tic}
        tic = time.perf_counter()
        del data, X_fit, machines  # the Gram matrix is released before the decision blocks
        decision = self._decision(X64, self._block_bytes())
        self.transduction_ = labels_from_decision(self.classes_, decision)
        timings["transduction"] = time.perf_counter() - tic
        timings["total"] = time.perf_counter() - start
        self.timings_ = timings
        log(
            f"[{type(self).__name__}] n={n} labeled={labeled.size} unlabeled trained on={u} "
            f"({format_bytes(self.estimated_bytes_)} estimated): {int(self.n_iter_.sum())} "
            f"trainings, {int(self.n_switched_.sum())} pairs switched, {timings['tsvm']:.3f}s",
            self.verbose,
        )
        return self

    def _sample_size(self, n_labeled, n_unlabeled, X, n, n_machines, kernel) -> int:
        if self.max_unlabeled is None:
            return n_unlabeled
        if isinstance(self.max_unlabeled, str):  # "budget"
            # < 0: not even the labeled points fit; fit's check then refuses them alone
            return max(self._largest_sample(n_labeled, n_unlabeled, X, n, n_machines, kernel), 0)
        return min(int(self.max_unlabeled), n_unlabeled)

    def _train(self, data, targets, weights):
        """One weighted training: liblinear on the rows, or libsvm on the Gram matrix."""
        if isinstance(self.kernel_, Linear):
            # the hinge (not liblinear's default squared hinge): Joachims' slacks ξ
            machine = LinearSVC(
                C=1.0,
                loss="hinge",
                dual=True,
                tol=self.tol,
                max_iter=10_000,
                random_state=self._seed,  # liblinear's order of coordinates
            )
        else:
            machine = SVC(C=1.0, kernel="precomputed", tol=self.tol, cache_size=_LIBSVM_CACHE_MIB)
        with warnings.catch_warnings():
            # liblinear's iteration cap at tiny unlabeled weights: the next round refits
            warnings.simplefilter("ignore", ConvergenceWarning)
            return machine.fit(data, targets, sample_weight=weights)

    def _decision_on(self, machine, data, rows):
        """The machine's values at the training rows ``rows`` (one matrix-vector product)."""
        if isinstance(self.kernel_, Linear):
            return machine.decision_function(data[rows])
        alpha = np.zeros(data.shape[1])
        alpha[machine.support_] = machine.dual_coef_[0]
        return get_ops().matmul(data[rows], alpha) + machine.intercept_[0]

    def _tsvm(self, data, y_l, n_pos, name):
        """Joachims' TSVM on ``data`` (the training rows, or their Gram matrix; labeled rows
        first, targets ``y_l`` in ±1).

        Returns the final machine, the unlabeled rows' ±1 labels, the trainings after the
        labeled machine and the pairs switched (:func:`._label_switching.switch_labels`), and
        the labeled machine's one training.
        """
        l = y_l.size
        u = data.shape[0] - l
        if isinstance(self.kernel_, Linear):
            machine = self._train(data[:l], y_l, np.full(l, float(self.C)))
        else:
            # The labeled machine on the whole Gram matrix with the unlabeled rows weighted 0:
            # scikit-learn's libsvm drops zero-weight rows (their α is 0 whatever), so this is
            # the SVM of the labeled points, without the copy of their l × l block that the
            # non-contiguous view data[:l, :l] would cost (l² floats: 83 MB for a9a's 3,256
            # labels with 10 %)
            weights = np.zeros(data.shape[0])
            weights[:l] = self.C
            machine = self._train(data, np.concatenate([y_l, np.ones(u)]), weights)
        if u == 0:
            return (machine, np.empty(0), 0, 0), 1
        return switch_labels(
            machine,
            data,
            y_l,
            n_pos,
            train=self._train,
            decision_on=self._decision_on,
            find_pairs=self._switchable_pairs,
            C=float(self.C),
            C_unlabeled=float(self.C_unlabeled),
            max_iter=self.max_iter,
            owner=type(self).__name__,
            name=name,
            verbose=self.verbose,
        ), 1

    #: Disjoint switchable pairs (a static method, so that a test may replace it)
    _switchable_pairs = staticmethod(switchable_pairs)

    def _keep_machines(self, machines, X_rows):
        """The final machines as ``X_fit_``, ``dual_coef_``, ``coef_`` and ``intercept_``."""
        self.intercept_ = np.array([float(np.ravel(m.intercept_)[0]) for m in machines])
        if isinstance(self.kernel_, Linear):
            self.coef_ = np.vstack([m.coef_ for m in machines])
            self.X_fit_ = X_rows[:0]
            self.dual_coef_ = np.zeros((len(machines), 0))
            self.support_ = np.empty(0, dtype=np.intp)
            return
        support = np.unique(np.concatenate([m.support_ for m in machines]))
        dual = np.zeros((len(machines), support.size))
        for c, m in enumerate(machines):
            dual[c, np.searchsorted(support, m.support_)] = m.dual_coef_[0]
        self.coef_ = None
        self.X_fit_ = X_rows[support]
        self.dual_coef_ = dual
        self.support_ = support  # rows of the training sample (fit_indices_[support_] in X)

    # ------------------------------------------------------------------------ predict
    def _decision(self, X64, block_bytes=None):
        """Decision columns of float64 points, one per machine (kernel blocks within
        ``block_bytes``, by default ``memory_budget``)."""
        ops = get_ops()
        if self.coef_ is not None:
            W = np.ascontiguousarray(self.coef_.T)
            product = ops.sparse_matmul(X64, W) if sp.issparse(X64) else ops.matmul(X64, W)
            return np.asarray(product) + self.intercept_
        X_sv = self.X_fit_.astype(np.float64, copy=False)
        if X_sv.shape[0] == 0:
            return np.tile(self.intercept_, (X64.shape[0], 1))
        # K(X, X_fit_) @ dual_coef_ᵀ, block by block under the budget
        V = np.ascontiguousarray(self.dual_coef_.T)
        budget = self.memory_budget if block_bytes is None else block_bytes
        decision = ops.kernel_matmul(self.kernel_, X64, X_sv, V, budget)
        return decision.reshape(X64.shape[0], -1) + self.intercept_

    def decision_function(self, X):
        """Decision values of the final machine(s).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_queries, n_features)

        Returns
        -------
        ndarray of shape (n_queries,) or (n_queries, n_classes)
            Two classes: ``f(x)``, positive means ``classes_[1]``.  More: one column per class,
            its one-vs-rest machine's value.
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
        decision = self._decision(self._check_predict_X(X))  # refuses an unfitted model
        return labels_from_decision(self.classes_, decision)

    def _check_predict_X(self, X):
        check_is_fitted(self, "intercept_")
        return validate_X(self, X, reset=False).astype(np.float64, copy=False)
