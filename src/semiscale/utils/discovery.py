"""The registry of semiscale's estimators, found by walking the package (no hand-kept list).

An *estimator* here is a public class (its name has no leading underscore) that derives from
scikit-learn's :class:`~sklearn.base.BaseEstimator`, has a ``fit`` method and is not abstract,
except the kernels (:class:`semiscale.kernels.Kernel`): they derive from ``BaseEstimator`` for
``get_params``/``clone``, but their ``fit`` returns a fitted *copy* (the estimator keeps the
unfitted one as its parameter), so they are parameters of estimators, not estimators, and
scikit-learn's estimator checks do not apply to them (its own Gaussian-process kernels are not
estimators either).

Why walk the package rather than read ``semiscale.__all__``: the registry is what the top-level
exports are checked against (``tests/test_common.py``), so it must not be derived from them.
"""

from __future__ import annotations

import inspect
import pkgutil
from importlib import import_module
from operator import itemgetter

from sklearn.base import (
    BaseEstimator,
    ClassifierMixin,
    ClusterMixin,
    MetaEstimatorMixin,
    RegressorMixin,
    TransformerMixin,
)

from ..kernels import Kernel

__all__ = ["all_estimators"]

#: Modules not walked: the command line and the demo import the whole library and define no
#: estimator.
_SKIPPED_MODULES = {"semiscale.cli", "semiscale._demo"}

#: Packages not walked: the backends define no estimator, and importing their modules imports
#: their optional libraries (dask, torch), or fails without them.
_SKIPPED_PACKAGES = ("semiscale.backends",)


def _is_graph(cls):
    return cls.__module__.startswith("semiscale.graph")


#: The types ``type_filter`` accepts, each a predicate on a class.
TYPES = {
    # scikit-learn's mixins: SSLClassifierMixin / SSLRegressorMixin derive from them
    "classifier": lambda cls: issubclass(cls, ClassifierMixin),
    "regressor": lambda cls: issubclass(cls, RegressorMixin),
    # scikit-learn's ClusterMixin: KernelKMeans (unsupervised: fit(X), labels_, predict)
    "cluster": lambda cls: issubclass(cls, ClusterMixin),
    # scikit-learn's TransformerMixin: the cluster kernels (fit_transform gives the virtual
    # samples, transform extends them to new points); and the graphs, transductive transformers
    # (fit_transform returns the Laplacian, there is no transform of new points)
    "transformer": lambda cls: issubclass(cls, TransformerMixin) or _is_graph(cls),
    # what an estimator's ``graph`` parameter takes: a class of semiscale.graph
    "graph": _is_graph,
    # meta-estimators: the grid searches, which fit clones of the estimator they are given
    "search": lambda cls: issubclass(cls, MetaEstimatorMixin),
}


def _walk():
    """Import every module of semiscale (except :data:`_SKIPPED_MODULES` and
    :data:`_SKIPPED_PACKAGES`) and yield it."""
    import semiscale

    yield semiscale
    for info in pkgutil.walk_packages(semiscale.__path__, prefix="semiscale."):
        if info.name in _SKIPPED_MODULES or info.name.startswith(_SKIPPED_PACKAGES):
            continue
        yield import_module(info.name)


def all_estimators(type_filter=None):
    """Every public estimator class of semiscale, found by walking the package.

    Parameters
    ----------
    type_filter : {"classifier", "regressor", "cluster", "transformer", "graph", "search"}, \
list of them or None, default=None
        Keep only the estimators of at least one of these types (None: all of them).
        Classifiers, regressors and clusterers are told by scikit-learn's ``ClassifierMixin``,
        ``RegressorMixin`` and ``ClusterMixin``; transformers by ``TransformerMixin`` (the
        cluster kernels), the graphs being transformers too (their ``fit_transform`` returns
        the Laplacian);
        graphs are the classes of :mod:`semiscale.graph`; searches are the meta-estimators
        (``MetaEstimatorMixin``).

    Returns
    -------
    estimators : list of (str, type)
        ``(name, class)`` pairs sorted by name, each class once, wherever it is defined
        (private modules included: ``KNNGraph`` lives in ``semiscale.graph._graph``).

    Raises
    ------
    ValueError
        If ``type_filter`` names an unknown type.

    Examples
    --------
    >>> from semiscale.utils import all_estimators
    >>> [name for name, _ in all_estimators(type_filter="regressor")]
    ['LapRLSRegressor', 'NystromLapRLSRegressor', 'SparseLapCVMRegressor']
    """
    if type_filter is None:
        wanted = None
    else:
        wanted = [type_filter] if isinstance(type_filter, str) else list(type_filter)
        unknown = [t for t in wanted if t not in TYPES]
        if unknown:
            raise ValueError(
                f"type_filter must be None or among {sorted(TYPES)} (or a list of them), got "
                f"{unknown!r}; pass e.g. type_filter='classifier'"
            )
    found = set()
    for module in _walk():
        for name, cls in inspect.getmembers(module, inspect.isclass):
            if (
                name.startswith("_")
                or not cls.__module__.startswith("semiscale")
                or not issubclass(cls, BaseEstimator)
                or not callable(getattr(cls, "fit", None))
                or inspect.isabstract(cls)
                or issubclass(cls, Kernel)
            ):
                continue
            if wanted is None or any(TYPES[t](cls) for t in wanted):
                found.add((cls.__name__, cls))
    return sorted(found, key=itemgetter(0))
