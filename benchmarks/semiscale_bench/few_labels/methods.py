"""The few-labels benchmark's methods: semiscale's classifiers at their defaults and the peer.

Each factory gets the trial's seed as ``random_state`` (where the estimator takes one) and
nothing else: every other parameter is the estimator's default.  semiscale's classifiers are
given the shared default graph's Laplacian (``fit(X, y, laplacian=L)``), so their fit time
excludes the graph; scikit-learn's LabelSpreading builds its kNN graph inside ``fit``.

The oracles (issue 32) are the exception: ``Poisson-MBO (true priors)`` and GraphLearning's MBO
methods are given each class's share of all the dataset's points
(:func:`~semiscale_bench.few_labels.data.class_proportions`), as GraphLearning's examples give
them; ``Poisson-MBO`` at its defaults estimates the priors from the labeled points.
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
    "Poisson-MBO": (
        "PoissonMBOClassifier",
        {},
        "`PoissonMBOClassifier()` (Poisson-MBO; class priors estimated from the labeled points)",
    ),
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
    "Poisson-MBO (true priors)",
    params="defaults",
    description="`PoissonMBOClassifier(class_prior=p)` with p each class's share of all the "
    "dataset's points: the oracle, to measure what the true priors would add",
)
def _poisson_mbo_oracle(params, sizes, *, protocol, dataset, seed):
    from semiscale.models import PoissonMBOClassifier
    from semiscale_bench.few_labels.data import class_proportions

    return PoissonMBOClassifier(class_prior=class_proportions(protocol, dataset), random_state=seed)


@METHODS.register(
    "sklearn LabelSpreading",
    params="defaults",
    description='scikit-learn `LabelSpreading(kernel="knn", n_neighbors=10, alpha=0.99)`; its '
    "time includes its own kNN graph",
)
def _label_spreading(params, sizes, *, protocol, dataset, seed):
    from sklearn.semi_supervised import LabelSpreading

    return LabelSpreading(kernel="knn", n_neighbors=10, alpha=0.99)


#: GraphLearning's models: algorithm -> (name, whether given the true class priors).
_PEERS = {
    "laplace": ("Laplace", False),
    "poisson": ("Poisson", False),
    "poisson_mbo": ("Poisson-MBO", True),
    "volume_mbo": ("Volume-MBO", True),
}

for _algorithm, (_what, _oracle) in _PEERS.items():

    def _graphlearning(params, sizes, *, protocol, dataset, seed, algorithm=_algorithm):
        from semiscale_bench.few_labels.data import class_proportions
        from semiscale_bench.few_labels.peers import GraphLearningClassifier

        priors = class_proportions(protocol, dataset) if _PEERS[algorithm][1] else None
        return GraphLearningClassifier(algorithm, class_priors=priors)

    _priors = (
        "with `class_priors` the true class proportions (as its examples give them), otherwise "
        if _oracle
        else ""
    )
    METHODS.register(
        f"GraphLearning {_what}",
        params="defaults",
        description=f"Calder's GraphLearning `graphlearning.ssl.{_algorithm}` {_priors}at its "
        "defaults on its `weightmatrix.knn(X, 10)` graph (exact neighbours); its time excludes "
        "that graph (`peers.py`); run only where graphlearning is installed",
    )(_graphlearning)


def takes_laplacian(estimator) -> bool:
    """Whether ``estimator`` is one of ours (accepts ``fit(X, y, laplacian=L)``)."""
    module = type(estimator).__module__
    return module.startswith("semiscale.") and not module.startswith("semiscale_bench.")
