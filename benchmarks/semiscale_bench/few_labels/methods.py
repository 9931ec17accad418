"""The few-labels benchmark's methods: semiscale's classifiers at their defaults and the peer.

Each factory gets the trial's seed as ``random_state`` (where the estimator takes one) and
nothing else: every other parameter is the estimator's default.  semiscale's classifiers are
given the shared default graph's Laplacian (``fit(X, y, laplacian=L)``), so their fit time
excludes the graph; scikit-learn's LabelSpreading builds its kNN graph inside ``fit``.
"""

from __future__ import annotations

from functools import partial

from semiscale_bench.harness import MethodRegistry

METHODS = MethodRegistry()

#: name -> (class name in semiscale.models, extra parameters, description)
_OURS = {
    "LapRLS (exact)": ("LapRLSClassifier", {}, "`LapRLSClassifier()`, exact (direct) solve"),
    "Nyström LapRLS": ("NystromLapRLSClassifier", {}, "`NystromLapRLSClassifier()`"),
    "Harmonic": ("HarmonicClassifier", {}, "`HarmonicClassifier()` (Laplace learning)"),
    "Harmonic + CMN": (
        "HarmonicClassifier",
        {"class_mass_normalization": True},
        "`HarmonicClassifier(class_mass_normalization=True)`",
    ),
    "Poisson": ("PoissonClassifier", {}, "`PoissonClassifier()` (Poisson learning)"),
    # the scaling experiment's documented setting at 1,000,000 points: on the default heat
    # graph the AMG-preconditioned residual falls slowly there (semiscale.solvers.amg), while
    # the labels stop changing after about 20 iterations
    "Poisson (tol=1e-2)": (
        "PoissonClassifier",
        {"tol": 1e-2},
        "`PoissonClassifier(tol=1e-2)`: a looser CG tolerance (scaling experiment only)",
    ),
}


def _ours(params, sizes, *, protocol, dataset, seed, cls, options):
    from semiscale import models

    return getattr(models, cls)(random_state=seed, **options)


for _name, (_cls, _options, _description) in _OURS.items():
    _factory = partial(_ours, cls=_cls, options=_options)
    METHODS.register(_name, params="defaults", description=_description)(_factory)


@METHODS.register(
    "sklearn LabelSpreading",
    params="defaults",
    description='scikit-learn `LabelSpreading(kernel="knn", n_neighbors=10, alpha=0.99)`; its '
    "time includes its own kNN graph",
)
def _label_spreading(params, sizes, *, protocol, dataset, seed):
    from sklearn.semi_supervised import LabelSpreading

    return LabelSpreading(kernel="knn", n_neighbors=10, alpha=0.99)


for _algorithm, _what in {"laplace": "Laplace", "poisson": "Poisson"}.items():

    def _graphlearning(params, sizes, *, protocol, dataset, seed, algorithm=_algorithm):
        from semiscale_bench.few_labels.peers import GraphLearningClassifier

        return GraphLearningClassifier(algorithm)

    METHODS.register(
        f"GraphLearning {_what}",
        params="defaults",
        description=f"Calder's GraphLearning `graphlearning.ssl.{_algorithm}` at its defaults "
        "on its `weightmatrix.knn(X, 10)` graph (exact neighbours); its time excludes that "
        "graph (`peers.py`); run only where graphlearning is installed",
    )(_graphlearning)


def takes_laplacian(estimator) -> bool:
    """Whether ``estimator`` is one of ours (accepts ``fit(X, y, laplacian=L)``)."""
    module = type(estimator).__module__
    return module.startswith("semiscale.") and not module.startswith("semiscale_bench.")
