"""Laplace learning (Zhu, Ghahramani & Lafferty 2003), with class mass normalization.

The shared fit path, unreached components and the extension to new points are in
:mod:`semiscale.models.graph_learning`; the solve is
:func:`semiscale.solvers.graph_learning.laplace_learning`.
"""

from __future__ import annotations

import numpy as np

from ..solvers.graph_learning import laplace_learning
from ._base import (
    DEFAULT_GRAPH,
)
from .graph_learning import (
    GRAPH_LEARNING_PARAMETER_CONSTRAINTS,
    _GraphLearningClassifier,
)

__all__ = ["HarmonicClassifier"]


class HarmonicClassifier(_GraphLearningClassifier):
    r"""Laplace learning: the harmonic function of the graph that equals the labels (GFHF).

    Zhu, Ghahramani & Lafferty (ICML 2003).  With ``Y_l`` the one-hot labels and ``L`` the
    graph Laplacian of all training points, the class indicators ``F`` solve

    .. math::  L_{uu} F_u = -L_{ul} Y_l, \qquad F_l = Y_l,

    so that every unlabeled point's row is the weighted mean of its neighbours' rows (for
    ``L = D − W``: a probability vector, so the last column is one minus the others and is not
    solved).  The classes are solved at once by conjugate gradient, preconditioned by algebraic
    multigrid or Jacobi (``solver``); ``L_uu`` is positive definite when every connected
    component of unlabeled points touches a label.  With ``class_mass_normalization=True``
    (CMN), class ``c`` is rescaled by ``q_c / Σ_u F_{uc}``, its prior over its mass on the
    unlabeled points, before the arg max.

    Probabilities (:meth:`predict_proba`, ``transduction_proba_``): a row of ``F`` is the
    distribution of the class of the first labeled point a random walk from the point hits
    (Zhu et al.), so the probabilities are the scores ``s = F · diag(class_scale_)``
    renormalized,

    .. math::  P_{ic} = \frac{\max(s_{ic}, 0)}{\sum_k \max(s_{ik}, 0)},

    i.e. without CMN the rows of ``F`` themselves, with CMN the walk's distribution reweighted by
    each class's prior over its mass (Bayes' rule with the prior changed).  The clip at 0 only
    removes the solver's error (the exact ``F`` is non-negative; a CG solve stopped at ``tol``
    can leave entries slightly below 0); a row with no positive score (a normalized or ridge
    Laplacian far from every label) gets ``class_prior_``.  The arg max of ``P`` is the arg
    max of the scores on every other row.

    Laplace learning degenerates when labels are very few: its solution flattens to a constant
    away from the labels (one label per class on usps's 7,291 training images, 10-NN graph:
    35 % right on average over three draws, 84 % with CMN; ``docs/graph_learning.md``).
    :class:`PoissonClassifier` is built for that regime.

    Parameters
    ----------
    graph : KNNGraph, PrecomputedGraph or None, default=KNNGraph()
        Graph builder whose ``laplacian_`` is used (None also means ``KNNGraph()``).  Any
        Laplacian works (normalized, powers, a ridge).  Ignored when ``fit`` receives
        ``laplacian=``.  A copy is fitted (``graph_``); it takes the estimator's
        ``memory_budget``, ``n_jobs`` and ``random_state`` where its own are None.
    class_mass_normalization : bool, default=True
        Rescale each class by its prior over its mass before the arg max (CMN).  Chosen by
        measurement (ad hoc, commit fa16499, no results folder): on usps's 7,291 training images
        (default graph, 5 label draws) plain Laplace learning labels 39.4 / 73.3 / 81.5 / 92.8 %
        of the unlabeled images right at 1 / 3 / 5 / 10 labels per class, CMN 90.7 / 94.6 /
        94.9 / 95.2 %.  False gives the plain harmonic solution's arg max.
    class_prior : {"uniform"}, array-like of shape (n_classes,) or None, default=None
        The class proportions ``q`` of CMN (in the order of ``classes_``, normalized to sum to
        1); None estimates them from the labeled points.  Also the scores of points that no
        label reaches.  Known true proportions are better used as a volume constraint than by
        CMN: on usps at one label per class CMN with them labels 84.1 % right against 88.1 %
        with the labels' (uniform) proportions, and a volume threshold of CMN's scores at them
        92.0 % (``benchmarks/results/volume_constraints/``);
        :class:`~semiscale.models.PoissonMBOClassifier` takes them as ``class_prior`` and keeps
        every class at its volume (93.0 %).
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
        CG iteration cap (None: with Jacobi, 10 times the number of unlabeled points; 1,000
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
    label_distributions_ : ndarray of shape (n_samples, n_classes)
        The harmonic solution ``F`` on the training points (one-hot on the labeled ones).
    scores_ : ndarray of shape (n_samples, n_classes)
        ``F`` times ``class_scale_``.
    transduction_proba_ : ndarray of shape (n_samples, n_classes)
        Class probabilities of the training points (as scikit-learn's ``LabelSpreading``
        calls ``label_distributions_``): the renormalized scores (above), one-hot on the
        labeled points, ``class_prior_`` on the unreached ones; ``transduction_`` is its arg
        max.
    class_scale_ : ndarray of shape (n_classes,)
        CMN's factors ``q_c / Σ_u F_{uc}`` (ones without CMN).
    class_prior_ : ndarray of shape (n_classes,)
        The class proportions used (sum 1).
    transduction_ : ndarray of shape (n_samples,)
        Labels of the training points (labeled points keep their label).
    solver_ : {"cg", "amg"} or None
        The preconditioner used (None when nothing was solved).
    n_iter_ : int
        CG iterations (0 when no point is unlabeled).
    residuals_ : ndarray of shape (n_iter_ + 1, n_solved) or None
        Relative residual history of CG (None when nothing was solved).  ``n_solved`` is
        ``n_classes - 1`` when the rows of ``L`` sum to 0 (the last column of ``F`` is then one
        minus the others), else ``n_classes``.
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
    PoissonClassifier : Poisson learning, for very few labels.
    LapRLSClassifier : Manifold-regularized least squares (a kernel function of the inputs).

    Examples
    --------
    >>> import numpy as np
    >>> from semiscale.datasets import make_two_moons
    >>> from semiscale.graph import KNNGraph
    >>> from semiscale.models import HarmonicClassifier
    >>> X, y = make_two_moons(200, noise=0.05, random_state=0)
    >>> y_ssl = np.full_like(y, -1)  # -1 marks unlabeled points
    >>> for c in (0, 1):             # three labeled points per moon
    ...     y_ssl[np.flatnonzero(y == c)[:3]] = c
    >>> model = HarmonicClassifier(graph=KNNGraph(n_neighbors=10)).fit(X, y_ssl)
    >>> float((model.transduction_ == y).mean())
    1.0
    >>> model.predict([[0.0, 1.0], [1.0, -0.5]])  # new points on each moon
    array([0, 1])
    >>> model.predict_proba([[0.0, 1.0], [1.0, -0.5]]).round(2)
    array([[1., 0.],
           [0., 1.]])
    """

    _parameter_constraints: dict = {
        **GRAPH_LEARNING_PARAMETER_CONSTRAINTS,
        "class_mass_normalization": ["boolean"],
    }
    _method = "harmonic"

    def __init__(
        self,
        *,
        graph=DEFAULT_GRAPH,
        class_mass_normalization=True,
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
        self.class_mass_normalization = class_mass_normalization
        self.class_prior = class_prior
        self.solver = solver
        self.tol = tol
        self.max_iter = max_iter
        self.memory_budget = memory_budget
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.unlabeled = unlabeled

    def _proba_from_scores(self, scores):
        proba = np.maximum(scores, 0.0)
        total = proba.sum(axis=1, keepdims=True)
        empty = total[:, 0] <= 0
        proba[empty] = self.class_prior_
        total[empty] = 1.0
        proba /= total
        return proba

    def _solve_scores(self, L, targets, components, reached, prior):
        solution = laplace_learning(
            L,
            targets.labeled,
            targets.codes,
            reached,
            prior,
            class_mass_normalization=self.class_mass_normalization,
            solve=self._cg,
        )
        self.label_distributions_ = solution.label_distributions
        self.class_scale_ = solution.class_scale
        return solution.scores, solution.result
