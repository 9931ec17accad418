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

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, clone

from semiscale.kernels import RBF
from semiscale_bench.harness import MethodRegistry
from semiscale_bench.paper001.protocol import (
    LAPSVM,
    MOONS,
    NYSTROM,
    REDUCED,
    SLAPCVM,
    SLAPCVM_PAPER,
    SVM,
)

__all__ = ["METHODS", "LabeledOnlySVC", "expansions", "kernel_for", "make_graph"]

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


class LabeledOnlySVC(ClassifierMixin, BaseEstimator):
    """scikit-learn's ``SVC`` on the labeled points alone (``y == -1``: unlabeled, ignored).

    The RBF width is resolved on every training point, labeled or not, as the semi-supervised
    methods' (a data-dependent ``gamma`` on two points would be meaningless).
    """

    def __init__(self, kernel=None, C=1000.0):
        self.kernel = kernel
        self.C = C

    def fit(self, X, y, laplacian=None):
        from sklearn.svm import SVC

        y = np.asarray(y)
        labeled = y != -1
        gamma = (self.kernel or RBF(gamma="mean")).resolve(X).gamma
        self.svc_ = SVC(kernel="rbf", gamma=gamma, C=self.C).fit(X[labeled], y[labeled])
        self.classes_ = self.svc_.classes_
        self.n_support_ = int(self.svc_.support_.size)
        return self

    def predict(self, X):
        return self.svc_.predict(X)


def expansions(est) -> int:
    """Kernel expansions of a fitted predictor: the points whose coefficient is not zero."""
    if isinstance(est, LabeledOnlySVC):
        return est.n_support_
    coef = getattr(est, "dual_coef_", None)
    if coef is None:
        return int(est.X_fit_.shape[0])
    coef = np.asarray(coef).reshape(coef.shape[0], -1)
    return int(np.count_nonzero(np.any(coef != 0, axis=1)))


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


@METHODS.register(
    LAPSVM,
    params="tuned",
    description='`LapSVC(solver="primal")`: the exact LapSVM (squared hinge, Newton), every '
    "training point in its expansion",
)
def _lapsvm(params, sizes, *, protocol, dataset, seed):
    from semiscale.models import LapSVC

    return LapSVC(
        kernel=kernel_for(protocol, dataset), solver="primal", random_state=seed, **params[LAPSVM]
    )


@METHODS.register(
    REDUCED,
    params="tuned",
    description='`NystromLapSVC(center_selection="uniform", solver="direct")`: the paper\'s '
    "reduced LapSVM, r random points (r = 200 on the moons, 2,000 on USPS)",
)
def _reduced(params, sizes, *, protocol, dataset, seed):
    from semiscale.models import NystromLapSVC

    return NystromLapSVC(
        kernel=kernel_for(protocol, dataset),
        n_centers=centers_for(protocol, dataset, sizes.n_train),
        center_selection="uniform",
        solver="direct",
        random_state=seed,
        **params[REDUCED],
    )


@METHODS.register(
    NYSTROM,
    params="tuned",
    description='`NystromLapRLSClassifier(solver="direct")` on the reduced LapSVM\'s number of '
    "uniform centers (the squared loss on the same span)",
)
def _nystrom(params, sizes, *, protocol, dataset, seed):
    from semiscale.models import NystromLapRLSClassifier

    return NystromLapRLSClassifier(
        kernel=kernel_for(protocol, dataset),
        n_centers=centers_for(protocol, dataset, sizes.n_train),
        solver="direct",
        random_state=seed,
        **params[NYSTROM],
    )


@METHODS.register(
    SVM,
    params="fixed",
    description="scikit-learn `SVC` (RBF, the same width, C = `svm_C`) on the two labeled "
    "points: the paper's supervised baseline",
)
def _svm(params, sizes, *, protocol, dataset, seed):
    return LabeledOnlySVC(kernel=kernel_for(protocol, dataset), C=protocol.svm_C)
