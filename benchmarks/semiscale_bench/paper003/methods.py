"""Paper 003's methods: estimator factories and the grid each one's CV searches.

Every factory reads one chosen point (a dict) of its method's grid.  Four families decide how
the CV runs (:mod:`.table3`): ``"none"`` (1-NN: nothing to choose), ``"features"`` (ClusK, SoCK,
NysCK: the transformer depends on gamma only, so it is fitted once per gamma and the linear
SVM's C is cross-validated on its labeled rows of F), ``"supervised"`` (TSVM: gamma and C by
CV of scikit-learn's ``SVC`` on the labeled rows, as Joachims chooses them, then one TSVM fit)
and ``"transductive"`` (the graph and Laplacian estimators: each grid point refitted per fold
with that fold's labels hidden).  The budgeted methods of Figure 1 (``budget_estimator``) take
the budget, the width and the seed.
"""

from __future__ import annotations

import numpy as np

from semiscale_bench.harness import MethodRegistry

__all__ = [
    "FAMILIES",
    "METHODS",
    "budget_estimator",
    "grid",
    "linear_svm",
    "median_gamma",
    "transformer",
]

METHODS = MethodRegistry()

#: Method -> its CV family (see the module docstring).
FAMILIES = {
    "1-NN": "none",
    "Harmonic": "transductive",
    "CMN": "transductive",
    "TSVM": "supervised",
    "ClusK": "features",
    "SoCK": "features",
    "NysCK": "features",
    "NysCK-kernel": "features",
    "Poisson": "transductive",
    "LapRLS": "transductive",
    "LapSVC": "transductive",
    "TSVM+RandSub": "budget",
    "ClusK+RandSub": "budget",
}


def median_gamma(X) -> float:
    """The library's median heuristic (``RBF(gamma="median")``: 1 / (2 median distance²)).

    The centre of the width grids.
    """
    from semiscale.kernels import RBF

    return float(RBF(gamma="median").resolve(X).gamma)


def grid(protocol, method: str, gamma0: float) -> list[dict]:
    """The points ``method``'s CV searches (``gamma0``: the set's median heuristic)."""
    gammas = [gamma0 * f for f in protocol.width_factors]
    family = FAMILIES[method]
    if family == "none":
        return [{}]
    if family in ("features", "supervised"):
        return [{"gamma": g, "C": c} for g in gammas for c in protocol.C_grid]
    if method in ("Harmonic", "CMN", "Poisson"):
        return [{"n_neighbors": k} for k in protocol.neighbor_grid]
    return [{"gamma": g} for g in gammas]  # LapRLS, LapSVC: the kernel's width


def linear_svm(C: float):
    """The linear SVM on the virtual samples F (Proposition 1): scikit-learn's LinearSVC."""
    from sklearn.svm import LinearSVC

    return LinearSVC(C=C)


def transformer(method: str, gamma, seed: int, memory_budget=None, **params):
    """The cluster-kernel transformer of ``method`` (gamma None: the transformer's default).

    ``params``: more of the transformer's parameters (SoCK's ``n_iter`` in Figure 2).
    """
    import semiscale.cluster_kernels as ck

    width = {} if gamma is None else {"gamma": gamma}
    budget = {} if memory_budget is None else {"memory_budget": memory_budget}
    budget.update(params)
    if method == "ClusK":
        return ck.ClusterKernel(**width, **budget, random_state=seed)
    if method == "ClusK+RandSub":
        return ck.ClusterKernel(**width, **budget, max_samples="budget", random_state=seed)
    if method == "SoCK":
        return ck.StochasticClusterKernel(**width, **budget, random_state=seed)
    if method == "NysCK":
        return ck.NystromClusterKernel(**width, **budget, random_state=seed)
    if method == "NysCK-kernel":
        return ck.NystromClusterKernel(**width, **budget, approximation="kernel", random_state=seed)
    raise ValueError(f"{method!r} has no cluster-kernel transformer")


_TRANSDUCTIVE = {}


def storage_fit_classifier(**params):
    """``StorageFitClassifier(**params)`` that keeps its decision values on the training rows.

    Proposition 1's linear SVM is trained and evaluated on the rows of F that the fit made:
    the transductive value of a training point is ``wᵀF_i + b``.  ``decision_function(X)``
    recomputes F by the transformer's extension instead, which for SoCK is not its fitted F
    (the extension of its eigenvectors through K) and costs a kernel pass over all n rows.
    The subclass records the values the fit computes for ``transduction_`` anyway, as
    ``transductive_decision_`` (with ``virtual_samples="streamed"``, one block of rows at a
    time: the blocks' values are concatenated).
    """
    if "class" not in _TRANSDUCTIVE:
        from semiscale.models import StorageFitClassifier

        class TransductiveStorageFit(StorageFitClassifier):
            def fit(self, X, y):
                self._decision_blocks = []
                try:
                    super().fit(X, y)
                    self.transductive_decision_ = np.concatenate(self._decision_blocks)
                finally:
                    self._decision_blocks = None
                return self

            def _labels(self, F):
                if getattr(self, "_decision_blocks", None) is not None:  # in fit
                    self._decision_blocks.append(
                        np.asarray(self.classifier_.decision_function(F), dtype=np.float64)
                    )
                return super()._labels(F)

        TransductiveStorageFit.__name__ = "StorageFitClassifier"
        _TRANSDUCTIVE["class"] = TransductiveStorageFit
    return _TRANSDUCTIVE["class"](**params)


def _storage_fit(method, params, seed, protocol):
    extra = {"n_iter": protocol.sock_n_iter} if method == "SoCK" else {}
    return storage_fit_classifier(
        transformer=transformer(method, params["gamma"], seed, **extra),
        classifier=linear_svm(params["C"]),
    )


def _graph(params, seed):
    from semiscale.graph import KNNGraph

    return KNNGraph(n_neighbors=params["n_neighbors"], random_state=seed)


def _register_storage_fit(name, description):
    @METHODS.register(name, params="features", description=description)
    def factory(params, sizes, *, protocol, dataset, seed):
        return _storage_fit(name, params, seed, protocol)


@METHODS.register(
    "1-NN", params="none", description="nearest labeled neighbour; score: distance difference"
)
def _one_nn(params, sizes, *, protocol, dataset, seed):
    from semiscale.models import NearestNeighborsClassifier

    return NearestNeighborsClassifier(n_neighbors=1)


@METHODS.register(
    "Harmonic",
    params="transductive",
    description="HarmonicClassifier (Zhu et al. 2003) without class mass normalization",
)
def _harmonic(params, sizes, *, protocol, dataset, seed):
    from semiscale.models import HarmonicClassifier

    return HarmonicClassifier(
        graph=_graph(params, seed), class_mass_normalization=False, random_state=seed
    )


@METHODS.register(
    "CMN", params="transductive", description="HarmonicClassifier with class mass normalization"
)
def _cmn(params, sizes, *, protocol, dataset, seed):
    from semiscale.models import HarmonicClassifier

    return HarmonicClassifier(
        graph=_graph(params, seed), class_mass_normalization=True, random_state=seed
    )


@METHODS.register(
    "TSVM",
    params="supervised",
    description="TSVMClassifier (Joachims 1999, RBF), gamma and C of the labeled-only SVC's CV",
)
def _tsvm(params, sizes, *, protocol, dataset, seed):
    from semiscale.kernels import RBF
    from semiscale.models import TSVMClassifier

    return TSVMClassifier(
        kernel=RBF(gamma=params["gamma"]),
        C=params["C"],
        C_unlabeled=params["C"],
        random_state=seed,
    )


_register_storage_fit("ClusK", "StorageFitClassifier(ClusterKernel): exact cluster kernel")
_register_storage_fit("SoCK", "StorageFitClassifier(StochasticClusterKernel), T = 20")
_register_storage_fit(
    "NysCK", "StorageFitClassifier(NystromClusterKernel): Nyström of L (our default reading)"
)
_register_storage_fit(
    "NysCK-kernel",
    "StorageFitClassifier(NystromClusterKernel(approximation='kernel')): Nyström of K (the "
    "paper's literal reading)",
)


@METHODS.register(
    "Poisson", params="transductive", description="PoissonClassifier (semiscale's extra row)"
)
def _poisson(params, sizes, *, protocol, dataset, seed):
    from semiscale.models import PoissonClassifier

    return PoissonClassifier(graph=_graph(params, seed), random_state=seed)


@METHODS.register(
    "LapRLS", params="transductive", description="LapRLSClassifier, RBF width by CV (extra row)"
)
def _laprls(params, sizes, *, protocol, dataset, seed):
    from semiscale.kernels import RBF
    from semiscale.models import LapRLSClassifier

    return LapRLSClassifier(kernel=RBF(gamma=params["gamma"]), random_state=seed)


@METHODS.register(
    "LapSVC", params="transductive", description="LapSVC, RBF width by CV (extra row)"
)
def _lapsvc(params, sizes, *, protocol, dataset, seed):
    from semiscale.kernels import RBF
    from semiscale.models import LapSVC

    return LapSVC(kernel=RBF(gamma=params["gamma"]), random_state=seed)


def budget_estimator(method: str, memory_budget, gamma, seed: int, sock_n_iter: int = 20):
    """A Figure 1 method under ``memory_budget`` (gamma None: the estimator's default width)."""
    if method == "TSVM+RandSub":
        from semiscale.kernels import RBF
        from semiscale.models import TSVMClassifier

        return TSVMClassifier(
            kernel=None if gamma is None else RBF(gamma=gamma),
            max_unlabeled="budget",
            memory_budget=memory_budget,
            random_state=seed,
        )
    extra = {"n_iter": sock_n_iter} if method == "SoCK" else {}
    if method == "ClusK+RandSub":
        # the paper's inductive ClusK+RandSub: fit on the subsample, the other rows of F a
        # block at a time (never n x m at once); the transformer's budget unset, so that
        # StorageFitClassifier hands it the budget less the classifier's part
        return storage_fit_classifier(
            transformer=transformer(method, gamma, seed, None, **extra),
            memory_budget=memory_budget,
            virtual_samples="streamed",
        )
    return storage_fit_classifier(
        transformer=transformer(method, gamma, seed, memory_budget, **extra),
        memory_budget=memory_budget,
    )


@METHODS.register(
    "TSVM+RandSub",
    params="budget",
    description="TSVMClassifier(max_unlabeled='budget'): the unlabeled subsample the budget fits",
)
def _tsvm_randsub(params, sizes, *, protocol, dataset, seed):
    return budget_estimator("TSVM+RandSub", params["budget"], params.get("gamma"), seed)


@METHODS.register(
    "ClusK+RandSub",
    params="budget",
    description="ClusterKernel(max_samples='budget'): exact ClusK on the subsample the budget "
    "fits, the other rows by its extension, a block at a time (virtual_samples='streamed')",
)
def _clusk_randsub(params, sizes, *, protocol, dataset, seed):
    return budget_estimator("ClusK+RandSub", params["budget"], params.get("gamma"), seed)
