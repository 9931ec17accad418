"""semiscale: scalable graph-based semi-supervised learning.

The public names below are imported lazily (on first access), so ``import semiscale`` stays cheap.
Every estimator (found by :func:`semiscale.utils.all_estimators`) and every tool of
:mod:`semiscale.model_selection` is among them (``tests/test_common.py`` checks that none is
missing).  So are scikit-learn's configuration functions, :func:`config_context`,
:func:`set_config` and :func:`get_config`, whose one setting is the backend that runs the heavy
products (:mod:`semiscale.backends`).
"""

from importlib import import_module

__version__ = "0.1.0"

_PUBLIC = {
    "config_context": "semiscale._config",
    "get_config": "semiscale._config",
    "set_config": "semiscale._config",
    "KNNGraph": "semiscale.graph",
    "PrecomputedGraph": "semiscale.graph",
    "DisconnectedGraphWarning": "semiscale.graph",
    "BIFSearchCV": "semiscale.model_selection",
    "SSLFold": "semiscale.model_selection",
    "SSLGridSearchCV": "semiscale.model_selection",
    "SSLKFold": "semiscale.model_selection",
    "SSLScorer": "semiscale.model_selection",
    "bif_cross_val_predict": "semiscale.model_selection",
    "bif_cross_val_score": "semiscale.model_selection",
    "make_ssl_scorer": "semiscale.model_selection",
    "get_ssl_scorer": "semiscale.model_selection",
    "ssl_cross_validate": "semiscale.model_selection",
    "ssl_cross_val_score": "semiscale.model_selection",
    "SquaredLoss": "semiscale.losses",
    "SquaredHingeLoss": "semiscale.losses",
    "HuberHingeLoss": "semiscale.losses",
    "EpsilonInsensitiveLoss": "semiscale.losses",
    "RBF": "semiscale.kernels",
    "LaplacianKernel": "semiscale.kernels",
    "Linear": "semiscale.kernels",
    "Polynomial": "semiscale.kernels",
    "DataDependentKernel": "semiscale.kernels",
    "ClusterKernel": "semiscale.cluster_kernels",
    "NystromClusterKernel": "semiscale.cluster_kernels",
    "StochasticClusterKernel": "semiscale.cluster_kernels",
    "CutWarning": "semiscale.cluster_kernels",
    "DataDependentSVC": "semiscale.models",
    "HarmonicClassifier": "semiscale.models",
    "KernelKMeans": "semiscale.models",
    "PoissonClassifier": "semiscale.models",
    "PoissonMBOClassifier": "semiscale.models",
    "LapRLSClassifier": "semiscale.models",
    "LapRLSRegressor": "semiscale.models",
    "LapSVC": "semiscale.models",
    "NystromLapRLSClassifier": "semiscale.models",
    "NystromLapRLSRegressor": "semiscale.models",
    "NystromLapSVC": "semiscale.models",
    "SparseLapCVMClassifier": "semiscale.models",
    "SparseLapCVMRegressor": "semiscale.models",
    "NearestNeighborsClassifier": "semiscale.models",
    "StorageFitClassifier": "semiscale.models",
    "TSVMClassifier": "semiscale.models",
    "load_dataset": "semiscale.datasets",
    "make_two_moons": "semiscale.datasets",
    "ssl_split": "semiscale.datasets",
}

#: Deprecated names: still resolved (their module warns), not exported by ``import *``.
_DEPRECATED = {"Laplacian": "semiscale.kernels"}

__all__ = sorted(_PUBLIC)


def __getattr__(name):
    if name in _PUBLIC:
        return getattr(import_module(_PUBLIC[name]), name)
    if name in _DEPRECATED:
        return getattr(import_module(_DEPRECATED[name]), name)
    raise AttributeError(f"module 'semiscale' has no attribute {name!r}")


def __dir__():
    return sorted(list(globals()) + __all__)
