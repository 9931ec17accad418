"""Paper 002's methods: four kernels under one scikit-learn ``SVC``.

Every method is ``SVC(kernel="precomputed")`` on the labeled rows; they differ only in the
kernel, built here by a factory from the grid point's graph power ``p`` (the η and σ of the
grid are set afterwards with ``with_ambient``, which needs no new solves):

* the efficient kernel (eq. 6, ``construction="landmarks"``) with n̂ = 250, and n̂ = 500 on the
  large task, on the paper's graph of every training row (passed to ``fit`` as ``laplacian=``);
* the full LapSVM kernel (eq. 4, ``construction="exact"``) on the same graph;
* the budget kernel (``construction="budget"``): the graph of the n̂ = 250 landmarks only;
* the RBF kernel alone (the supervised SVM).
"""

from __future__ import annotations

from semiscale_bench.harness import MethodRegistry
from semiscale_bench.paper002.protocol import BUDGET, EFFICIENT, EFFICIENT_500, FULL, RBF_SVM

__all__ = ["GRAPH_METHODS", "METHODS", "paper_graph"]

METHODS = MethodRegistry()

#: The methods whose kernel is fitted on the graph of every training row (``laplacian=``).
GRAPH_METHODS = (EFFICIENT, EFFICIENT_500, FULL)


def paper_graph(protocol, seed: int = 0):
    """The kernel's preset graph (k-NN, 0-1 weights, normalized Laplacian), k of the protocol."""
    from semiscale.kernels.data_dependent import paper_graph as preset

    return preset().set_params(n_neighbors=protocol.n_neighbors, random_state=seed)


def _data_dependent(params, protocol, seed, **options):
    from semiscale.kernels import RBF, DataDependentKernel

    return DataDependentKernel(
        base_kernel=RBF(gamma=1.0),  # the grid's σ is set by with_ambient
        power=params["power"],
        ridge=protocol.ridge,
        eta=1.0,
        solver=protocol.solver,
        landmark_selection=protocol.landmark_selection,
        random_state=seed,
        **options,
    )


@METHODS.register(
    EFFICIENT,
    params="kernel",
    description="`DataDependentKernel(construction='landmarks', n_landmarks=250)` (eq. 6) "
    "on the paper's graph of every training row, `SVC(kernel='precomputed')`",
)
def _efficient(params, sizes, *, protocol, dataset, seed):
    return _data_dependent(
        params,
        protocol,
        seed,
        graph="estimator",
        construction="landmarks",
        n_landmarks=min(protocol.n_landmarks, sizes.n_train),
    )


@METHODS.register(
    EFFICIENT_500,
    params="kernel",
    description="the same with n_landmarks=500 (Figure 3's second subsample size)",
)
def _efficient_500(params, sizes, *, protocol, dataset, seed):
    return _data_dependent(
        params,
        protocol,
        seed,
        graph="estimator",
        construction="landmarks",
        n_landmarks=min(protocol.large_landmarks, sizes.n_train),
    )


@METHODS.register(
    FULL,
    params="kernel",
    description="`DataDependentKernel(construction='exact')`: eq. (4) on every training row "
    "(dense n × n), the paper's 'full LapSVM' kernel",
)
def _full(params, sizes, *, protocol, dataset, seed):
    return _data_dependent(params, protocol, seed, graph="estimator", construction="exact")


@METHODS.register(
    BUDGET,
    params="kernel",
    description="`DataDependentKernel(construction='budget', n_landmarks=250)`: the paper's "
    "graph on the 250 landmarks only (its 'budget LapSVM' sanity baseline)",
)
def _budget(params, sizes, *, protocol, dataset, seed):
    return _data_dependent(
        params,
        protocol,
        seed,
        graph=paper_graph(protocol, seed),
        construction="budget",
        n_landmarks=min(protocol.n_landmarks, sizes.n_train),
    )


@METHODS.register(
    RBF_SVM,
    params="kernel",
    description="`RBF(gamma)` alone: scikit-learn's SVC on the labeled rows (supervised)",
)
def _rbf(params, sizes, *, protocol, dataset, seed):
    from semiscale.kernels import RBF

    return RBF(gamma=1.0)  # the grid's σ is set per grid point
