"""scikit-learn estimator checks that semiscale estimators are expected to fail, with why.

:func:`expected_failed_checks` is what ``parametrize_with_checks(..., expected_failed_checks=)``
takes, in ``tests/test_common.py`` (every registered estimator at its defaults) and in the test
files that check other configurations (another solver).  The rules read the estimator's
parameters, so that a new estimator is held to every check unless a rule says otherwise.
"""

import inspect

#: Shared by every estimator whose kernel or graph defaults to an object (not None).
DEFAULT_OBJECTS_XFAIL = {
    "check_parameters_default_constructible": (
        "kernel and graph default to shared RBF(gamma='median' or 'local') / KNNGraph() objects "
        "so that "
        "nested parameters (graph__n_neighbors, kernel__gamma) work in every search (issue 10); "
        "scikit-learn accepts only immutable or callable defaults. ManifoldMixin.set_params "
        "copies a shared default before any nested update (tests/test_manifold_estimators.py)"
    ),
}

#: Every semi-supervised classifier whose unlabeled marker is -1 (the default).
UNLABELED_MARKER_XFAIL = {
    "check_classifiers_classes": (
        "uses -1 as a class label, which is the unlabeled marker of semi-supervised classifiers "
        "(DESIGN.md §3); pass unlabeled=<other marker> for label sets containing -1"
    ),
}

#: Estimators whose fit performs no iteration in the configuration named (so ``n_iter_`` is 0
#: where scikit-learn's check wants at least 1), keyed by class name then by parameter values.
_NO_ITERATIONS = {
    "HarmonicClassifier": (
        {},
        "the check labels every point, so Laplace learning has no unlabeled point to solve for "
        "(n_iter_ = 0)",
    ),
    "NystromLapSVC": (
        {"solver": "auto"},
        "solver='auto' factors each Newton step's s x s system (n_iter_=0)",
    ),
}

#: Transformers whose ``fit_transform`` rows are not their ``transform`` of the same points.
_FIT_TRANSFORM_IS_NOT_TRANSFORM = {
    "StochasticClusterKernel": (
        "fit_transform returns paper 003's F from the eigenvectors of the SoCK iterate (Algorithm "
        "1 line 10); transform extends them by the Nystrom formula through the exact kernel rows, "
        "(L u)_j / sigma, which equals u_j only for exact eigenvectors of L (it approaches them "
        "as n_iter grows: tests/test_stochastic_cluster_kernel.py). Equal rows would cost a "
        "second O(n^2 d) kernel pass"
    ),
}


def expected_failed_checks(estimator):
    """The checks ``estimator`` is expected to fail, each with its reason."""
    params = estimator.get_params(deep=False)
    xfails = {}
    defaults = inspect.signature(type(estimator)).parameters
    # (KernelKMeans and DataDependentSVC default their kernel to None: nothing shared)
    if any(name in defaults and defaults[name].default is not None for name in ("kernel", "graph")):
        xfails.update(DEFAULT_OBJECTS_XFAIL)
    if params.get("unlabeled", None) == -1:
        xfails.update(UNLABELED_MARKER_XFAIL)
    # (LapSVC's dual formulation counts libsvm's iterations whatever its step solver)
    if params.get("solver") == "direct" and params.get("formulation", "primal") == "primal":
        xfails["check_non_transformer_estimators_n_iter"] = (
            "solver='direct' performs no iterations (n_iter_=0)"
        )
    reason = _FIT_TRANSFORM_IS_NOT_TRANSFORM.get(type(estimator).__name__)
    if reason is not None:
        xfails["check_transformer_general"] = reason
        xfails["check_transformer_data_not_an_array"] = reason
    rule = _NO_ITERATIONS.get(type(estimator).__name__)
    if rule is not None and all(params.get(k) == v for k, v in rule[0].items()):
        xfails["check_non_transformer_estimators_n_iter"] = rule[1]
    return xfails
