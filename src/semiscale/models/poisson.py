"""Poisson learning (Calder, Cook, Thorpe & Slepčev, ICML 2020), with mass balancing.

The shared fit path, unreached components and the extension to new points are in
:mod:`semiscale.models.graph_learning`; the solve is
:func:`semiscale.solvers.graph_learning.poisson_learning`.
"""

from __future__ import annotations

import numpy as np
from scipy.special import softmax
from sklearn.utils.validation import check_is_fitted

from ..solvers.graph_learning import poisson_learning
from ._base import (
    DEFAULT_GRAPH,
)
from .graph_learning import (
    GRAPH_LEARNING_PARAMETER_CONSTRAINTS,
    _GraphLearningClassifier,
)

__all__ = ["POISSON_TEMPERATURE_FACTOR", "PoissonClassifier"]

#: The softmax temperature of :meth:`PoissonClassifier.predict_proba` is this factor times the
#: standard deviation of the training scores of the unlabeled points in solved components.
#: Chosen by measurement (log loss of those points at the defaults, 1 and 5 labels per class,
#: 3 draws each, on usps, letter's first 5,000, mnist's test set, 2,000 two-moons points and
#: wine, unscaled and standardized): among 1/16 ... 2, 1/4 has the smallest worst ratio to the
#: best temperature of a fine grid (mean log losses over the draws), 1.46 (letter at one label
#: per class; 1.00 to 1.33 elsewhere), against 1.52 for 1/2 and 2.39 for 1/8; a
#: robust spread (1.4826 times the median absolute deviation) does worse, 1.99 at its best
#: factor (1).  On unscaled wine at 5 labels per class the log loss is 0.664 against 0.817
#: with the spread of every entry (the labeled points' spikes included);
#: ``python benchmarks/scripts/poisson_temperature.py``.
POISSON_TEMPERATURE_FACTOR = 0.25


class PoissonClassifier(_GraphLearningClassifier):
    r"""Poisson learning: labels as sources and sinks of a Poisson equation on the graph.

    Calder, Cook, Thorpe & Slepčev (ICML 2020).  With ``y_j`` the one-hot label of labeled
    point ``x_j`` and ``ȳ`` their mean, the scores ``U`` solve

    .. math::  L U = \sum_j (y_j - \bar y)\, \delta_{x_j}^\top,
               \qquad \sum_i d_i U_{ic} = 0 \ \text{for every class } c,

    with ``d`` the diagonal of ``L`` (the degrees when ``L = D − W``).  The sources sum to
    zero, so the singular system is consistent; it is solved for all classes but the last (the
    sources of a point sum to zero over the classes, so the columns of ``U`` do) by conjugate
    gradient preconditioned by algebraic multigrid or Jacobi (``solver``), and normalized to
    ``Σ_i d_i U_ic = 0`` at the end.  *Mass balancing* then multiplies class ``c``
    by ``b_c / ȳ_c`` (its prior over its share of the labels; 1 with the default prior) and a
    point's class is the arg max.  Unlike Laplace learning (:class:`HarmonicClassifier`), the
    solution does not flatten to a constant when labels are very few: with one label per class
    on usps's 7,291 training images (10-NN graph) it labels 84 % of the others right on average
    over three draws, against 35 % for Laplace learning (``docs/graph_learning.md``).

    Probabilities (:meth:`predict_proba`, ``transduction_proba_``): the scores are not
    probabilities (signed, and scaled as ``1/w`` when the graph's weights are scaled by ``w``),
    so they go through a softmax whose temperature ``T`` is proportional to their spread on the
    unlabeled training points,

    .. math::  P_{ic} = \frac{\exp(s_{ic} / T)}{\sum_k \exp(s_{ik} / T)}, \qquad
               T = τ\,\mathrm{std}(s_{\text{unlabeled}}),

    with ``std`` over the entries of ``scores_`` on the unlabeled points of the solved
    components, not the labeled points: they are the sources, where the scores spike (on
    unscaled wine, 5 labels per class, the spread of every entry is 2,300 times the unlabeled
    points'); when every solved point is labeled, as in ``SelfTrainingClassifier``'s first
    fit, or the unlabeled points' scores are all equal, over the solved points.
    ``τ = POISSON_TEMPERATURE_FACTOR`` (1/4, chosen by measurement for the log loss, see the
    constant).  The probabilities do not change when the scores are rescaled, a row's arg max
    is kept, and every class keeps a positive probability.  ``T`` is ``temperature_`` (1 when
    no component is solved).
    Rows whose scores are set rather than solved keep them as probabilities: a component whose
    labels are all of one class is certain of it (one-hot), an unreached one gets
    ``class_prior_``; a new point all of whose ``k`` nearest training points are such rows
    gets the mean of theirs; one with neighbours in both a solved and a set component gets
    the softmax of their scores' mean, which mixes the solved scores' scale with the set rows'
    (its probabilities and class then depend on the scale of the graph's weights).

    Several connected components: each component with labeled points of two or more classes is
    its own Poisson problem (its sources centred by its own mean label); every point of a
    component whose labeled points are all of one class gets that class (scores 1 for it, 0
    for the others).

    Parameters
    ----------
    graph : KNNGraph, PrecomputedGraph or None, default=KNNGraph()
        Graph builder whose ``laplacian_`` is used (None also means ``KNNGraph()``).  Ignored
        when ``fit`` receives ``laplacian=``.  The Laplacian must have rows summing to zero
        (``L = D − W`` or a power of it) or all to the same positive number (a ridge: the
        system is then non-singular and solved as it is); a normalized Laplacian is refused.
        A copy is fitted (``graph_``); it takes the estimator's ``memory_budget``, ``n_jobs``
        and ``random_state`` where its own are None.
    class_prior : {"uniform"}, array-like of shape (n_classes,) or None, default=None
        The class proportions ``b`` of mass balancing (in the order of ``classes_``,
        normalized to sum to 1); None takes the labeled points' proportions ``ȳ``, so the
        scores are not rescaled.  Also the scores of points that no label reaches.  Known true
        proportions lift accuracy most as a volume constraint
        (:class:`~semiscale.models.PoissonMBOClassifier` with ``class_prior``: 93.0 % on usps at
        one label per class, against 86.5 % here at the defaults;
        ``benchmarks/results/poisson_mbo_defaults/``).
    solver : {"auto", "cg", "amg"}, default="auto"
        Preconditioner of the conjugate-gradient solve: ``"amg"`` one smoothed-aggregation
        algebraic-multigrid V-cycle (:class:`~semiscale.solvers.amg.AMGPreconditioner`; 101
        iterations, 2.8 s, for Poisson learning on 100,000 two-moons points at tol=1e-6),
        ``"cg"`` the diagonal (Jacobi; 15,836 iterations, 25.9 s there: they grow with the
        graph's diameter), ``"auto"`` AMG from ``AMG_MIN_SIZE = 50_000`` unknowns on (chosen
        by measurement, see ``benchmarks/results/graph_solvers/``: up to 10,000 points Jacobi is
        as fast).
    tol : float, default=1e-3
        Relative residual ``‖b − A x‖ / ‖b‖`` at which CG stops, per class; ``> 0``.  1e-3 is
        GraphLearning's default for Poisson learning; chosen by measurement: on usps, mnist,
        letter and two moons its labels equal those of a 1e-6 solve on at least 99.90 % of the
        points, see ``benchmarks/results/graph_solvers/``.
    max_iter : int or None, default=None
        CG iteration cap (None: with Jacobi, 10 times the number of points solved for; 1,000
        with AMG, ``AMG_MAX_ITER``).
    memory_budget : int, str or None, default=None
        Largest working memory (bytes, or a string such as "512MiB"); None = a quarter of the
        available memory.  Bounds the graph (search and arrays) when ``graph`` has no budget of
        its own, the solver's ``n × C`` arrays, and the blocks of ``predict``; a budget that
        cannot hold them raises ``MemoryBudgetError`` before the graph is built.
    random_state : int, RandomState, Generator or None, default=None
        Passed to a graph that leaves its own at None (it seeds an approximate kNN search);
        the solve itself is deterministic.
    n_jobs : int or None, default=None
        Threads of the graph search (when ``graph`` leaves its own at None) and of the
        neighbour search of ``predict``; -1 means all cores.
    verbose : int or bool, default=0
        0: silent; 1: progress bars and a line per stage (graph, kernel, solve) on stderr;
        2: also a line per iteration (of CG, of Newton, of the core set, per fit of a
        search).  True means 1 (:mod:`semiscale._progress`).
    unlabeled : int, float, str or None, default=-1
        Marker of unlabeled points in ``y`` (None: every point is labeled).  A missing label
        (``None``, ``NaN``, pandas' ``pd.NA``: a nullable ``Int64`` or ``string`` column) marks
        an unlabeled point too; with ``unlabeled=None`` it is refused.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The classes seen among the labeled points.
    graph_ : KNNGraph, PrecomputedGraph or None
        The fitted copy of ``graph`` (None when a Laplacian was passed to ``fit``).
    scores_ : ndarray of shape (n_samples, n_classes)
        ``U`` times ``class_scale_`` on the training points.
    temperature_ : float
        The softmax temperature ``T`` of the probabilities (above).
    transduction_proba_ : ndarray of shape (n_samples, n_classes)
        Class probabilities of the training points (as scikit-learn's ``LabelSpreading``
        calls ``label_distributions_``): the softmax of ``scores_``, one-hot on the labeled
        points and in single-class components, ``class_prior_`` on the unreached points;
        ``transduction_`` is its arg max.
    class_scale_ : ndarray of shape (n_classes,)
        Mass balancing's factors ``b_c / ȳ_c``.
    class_prior_ : ndarray of shape (n_classes,)
        The class proportions used (sum 1).
    transduction_ : ndarray of shape (n_samples,)
        Labels of the training points (labeled points keep their label).
    solver_ : {"cg", "amg"} or None
        The preconditioner used (None when nothing was solved).
    n_iter_ : int
        CG iterations.
    residuals_ : ndarray of shape (n_iter_ + 1, n_classes - 1) or None
        Relative residual history of CG (None when nothing was solved): one column per class
        but the last (each point's sources sum to 0 over the classes, so the last column of
        ``U`` is minus the sum of the others and is not solved).
    n_labeled_ : int
        Number of labeled training points.
    n_unreached_ : int
        Training points in connected components without a labeled point; their scores are
        ``class_prior_``, so they get the most probable class (the most frequent labeled class
        by default, the first of ``classes_`` on a tie), with a ``DisconnectedGraphWarning``.
    X_fit_ : {ndarray, sparse matrix} of shape (n_samples, n_features)
        The training points, searched by ``predict``.
    extension_ : dict
        How ``predict`` extends the graph:
        ``"n_neighbors"`` (the graph's ``k``, or 8 with a Laplacian passed to ``fit``),
        ``"weights"`` (``"heat"``, or the graph's ``"binary"`` or ``"self-tuning"``) and
        ``"bandwidth"`` (the graph's σ for heat weights; None: each new point's mean distance
        to its ``k`` nearest training points).
    n_features_in_ : int
        Number of features seen during ``fit``.
    feature_names_in_ : ndarray of str, shape (n_features_in_,)
        Column names of ``X`` seen during ``fit``, when ``X`` is a pandas DataFrame with string
        column names.
    timings_ : dict
        Seconds spent building the graph (``"graph"``), solving (``"solve"``) and in total.

    See Also
    --------
    HarmonicClassifier : Laplace learning (harmonic functions), with class mass normalization.
    LapRLSClassifier : Manifold-regularized least squares (a kernel function of the inputs).

    Examples
    --------
    >>> import numpy as np
    >>> from semiscale.datasets import make_two_moons
    >>> from semiscale.graph import KNNGraph
    >>> from semiscale.models import PoissonClassifier
    >>> X, y = make_two_moons(200, noise=0.05, random_state=0)
    >>> first = [np.flatnonzero(y == 0)[0], np.flatnonzero(y == 1)[0]]  # a point of each moon
    >>> y_ssl = np.full_like(y, -1)  # -1 marks unlabeled points
    >>> y_ssl[first] = [0, 1]        # two labeled points, one per moon
    >>> model = PoissonClassifier(graph=KNNGraph(n_neighbors=10)).fit(X, y_ssl)
    >>> float((model.transduction_ == y).mean())
    1.0
    >>> model.predict([[0.0, 1.0], [1.0, -0.5]])  # new points on each moon
    array([0, 1])
    >>> model.predict_proba([[0.0, 1.0], [1.0, -0.5]]).round(2)
    array([[1., 0.],
           [0., 1.]])
    """

    _parameter_constraints: dict = dict(GRAPH_LEARNING_PARAMETER_CONSTRAINTS)
    _method = "Poisson"
    #: ``τ`` of the softmax temperature (a subclass with other scores sets its own).
    _temperature_factor = POISSON_TEMPERATURE_FACTOR

    def __init__(
        self,
        *,
        graph=DEFAULT_GRAPH,
        class_prior=None,
        solver="auto",
        tol=1e-3,
        max_iter=None,
        memory_budget=None,
        random_state=None,
        n_jobs=None,
        verbose=0,
        unlabeled=-1,
    ):
        self.graph = graph
        self.class_prior = class_prior
        self.solver = solver
        self.tol = tol
        self.max_iter = max_iter
        self.memory_budget = memory_budget
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.unlabeled = unlabeled

    def _fit_proba(self, scores, labeled):
        # the spread of the solved scores of unlabeled points only: the labeled points are
        # Poisson learning's sources, where the scores spike (by 1e3 on unscaled wine), and the
        # rows of single-class or unreached components are set, not solved (another scale)
        rows = self._solved_rows & ~labeled
        spread = float(np.std(scores[rows])) if rows.any() else 0.0
        if spread == 0 and self._solved_rows.any():
            # every solved point labeled (as SelfTrainingClassifier fits), or the unlabeled
            # ones all scored alike (halfway between two sources): the solved points' spread,
            # which scales with the scores as the unlabeled one would (a fixed T would not)
            spread = float(np.std(scores[self._solved_rows]))
        self.temperature_ = self._temperature_factor * spread if spread > 0 else 1.0

    def _proba_from_scores(self, scores):
        return softmax(scores / self.temperature_, axis=1)

    def _proba_where_solved(self, scores, solved):
        # a row set rather than solved is already a distribution (one-hot in a single-class
        # component, the prior in an unreached one, or a mean of those for a new point): kept
        proba = np.array(scores, dtype=np.float64)
        proba[solved] = self._proba_from_scores(scores[solved])
        kept = proba[~solved]
        proba[~solved] = kept / kept.sum(axis=1, keepdims=True)  # 1 exactly after a mean
        return proba

    def _training_proba(self, scores):
        return self._proba_where_solved(scores, self._solved_rows)

    def _new_proba(self, X):
        check_is_fitted(self, "scores_")
        # the share of solved neighbours is extended with the scores: 0 exactly when none is
        values = np.column_stack([self.scores_, self._solved_rows])
        extended = self._extend(X, values)
        return self._proba_where_solved(extended[:, :-1], extended[:, -1] > 0)

    def _solve_scores(self, L, targets, components, reached, prior):
        solution = poisson_learning(
            L, targets.labeled, targets.codes, components, prior, solve=self._cg
        )
        self.class_scale_ = solution.class_scale
        self._solved_rows = solution.solved
        return solution.scores, solution.result
