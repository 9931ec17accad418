"""Paper 001's methods as estimator factories: SLapCVM (two settings), the LapSVMs, the peers.

Every method gets the repeat's seed as ``random_state`` and the paper's kernel for the dataset
(:func:`kernel_for`); the graph is given to its ``fit`` (``laplacian=``), never built by it.
``SLapCVM`` and ``SLapCVM (mμ=1)`` read the protocol's ``slapcvm`` and ``slapcvm_paper``
settings and the graph's edge count (θ = edge_ratio·|E|/m, μ = m_mu/m); LapSVM, the reduced
LapSVM and Nyström LapRLS read the (ambient_reg, intrinsic_reg) the validation experiment
chose; the SVM is fitted on the labeled points alone.
"""

from __future__ import annotations

from functools import partial

from sklearn.base import clone

from semiscale.kernels import RBF
from semiscale_bench.harness import MethodRegistry
from semiscale_bench.harness.peers import LabeledOnlySVC
from semiscale_bench.paper001.protocol import (
    LAPSVM,
    MOONS,
    NYSTROM,
    REDUCED,
    SLAPCVM,
    SLAPCVM_PAPER,
    SVM,
)

__all__ = ["METHODS", "centers_for", "kernel_for", "make_graph"]

METHODS = MethodRegistry()


def make_graph(protocol, seed: int = 0):
    """The paper's graph (:data:`~semiscale.models.slapcvm.SLAPCVM_GRAPH`), unfitted."""
    from semiscale.models.slapcvm import SLAPCVM_GRAPH

    return clone(SLAPCVM_GRAPH).set_params(n_neighbors=protocol.n_neighbors, random_state=seed)


def kernel_for(protocol, dataset: str) -> RBF:
    """The paper's kernel: β = 0.25 on the moons, β = mean squared distance to the mean else."""
    if protocol.dataset(dataset).source == MOONS:
        return RBF(gamma=protocol.moons_gamma)
    return RBF(gamma="mean")


def centers_for(protocol, dataset: str, n_train: int) -> int:
    """The reduced LapSVM's r (and Nyström LapRLS's s), at most ``n_train``."""
    source = protocol.dataset(dataset).source
    return min(n_train, protocol.moons_centers if source == MOONS else protocol.usps_centers)


def _slapcvm(params, sizes, *, protocol, dataset, seed, setting):
    from semiscale.models import SparseLapCVMClassifier

    s = getattr(protocol, setting)
    return SparseLapCVMClassifier(
        kernel=kernel_for(protocol, dataset),
        C=s["C"],
        theta=s["edge_ratio"] * params["n_edges"] / sizes.m,
        mu=s["m_mu"] / sizes.m,
        tol=s["tol"],
        max_core_set=s["max_core_set"],
        max_iter=s["max_core_set"],  # bounded by the core set, as before max_iter existed
        random_state=seed,
    )


_SLAPCVM_DESCRIPTIONS = {
    SLAPCVM: ("slapcvm", "`SparseLapCVMClassifier` with the study's setting (protocol `slapcvm`)"),
    SLAPCVM_PAPER: (
        "slapcvm_paper",
        "`SparseLapCVMClassifier` with the paper's mμ = 1 (protocol `slapcvm_paper`)",
    ),
}
for _name, (_setting, _description) in _SLAPCVM_DESCRIPTIONS.items():
    METHODS.register(_name, params="fixed", description=_description)(
        partial(_slapcvm, setting=_setting)
    )


#: The tuned methods: name -> (class in :mod:`semiscale.models`, its options, whether it has the
#: reduced LapSVM's r centers, description).
_TUNED = {
    LAPSVM: (
        "LapSVC",
        {"formulation": "primal"},
        False,
        '`LapSVC(solver="primal")`: the exact LapSVM (squared hinge, Newton), every '
        "training point in its expansion",
    ),
    REDUCED: (
        "NystromLapSVC",
        {"center_selection": "uniform", "solver": "direct"},
        True,
        '`NystromLapSVC(center_selection="uniform", solver="direct")`: the paper\'s '
        "reduced LapSVM, r random points (r = 200 on the moons, 2,000 on USPS)",
    ),
    NYSTROM: (
        "NystromLapRLSClassifier",
        {"solver": "direct"},
        True,
        '`NystromLapRLSClassifier(solver="direct")` on the reduced LapSVM\'s number of '
        "uniform centers (the squared loss on the same span)",
    ),
}


def _tuned(params, sizes, *, protocol, dataset, seed, name):
    from semiscale import models

    estimator, options, centers, _ = _TUNED[name]
    if centers:
        options = {**options, "n_centers": centers_for(protocol, dataset, sizes.n_train)}
    kernel = kernel_for(protocol, dataset)
    return getattr(models, estimator)(kernel=kernel, random_state=seed, **options, **params[name])


for _name, (*_, _description) in _TUNED.items():
    METHODS.register(_name, params="tuned", description=_description)(partial(_tuned, name=_name))


@METHODS.register(
    SVM,
    params="fixed",
    description="scikit-learn `SVC` (RBF, the same width, C = `svm_C`) on the two labeled "
    "points: the paper's supervised baseline",
)
def _svm(params, sizes, *, protocol, dataset, seed):
    return LabeledOnlySVC(kernel=kernel_for(protocol, dataset), C=protocol.svm_C)
