"""``BIFSearchCV`` on a scikit-learn ``Pipeline`` (issue 28 item 2).

The steps before the last are fitted on all rows without labels, once per setting of theirs, and
the approximate CV expands the last step's fit on the transformed points: the scores are those
of ``BIFSearchCV`` on the last step given the transformed ``X``.  A step that needs ``y`` is
refused.
"""

import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import load_wine
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
from sklearn.exceptions import FitFailedWarning
from sklearn.feature_selection import SelectKBest
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

from reference_problems import hide_labels
from semiscale.graph import KNNGraph
from semiscale.kernels import RBF
from semiscale.model_selection import BIFSearchCV, SSLKFold
from semiscale.models import LapRLSClassifier, LapRLSRegressor

pytestmark = pytest.mark.filterwarnings("ignore::semiscale.graph.DisconnectedGraphWarning")


class CountingScaler(StandardScaler):
    """StandardScaler counting its fits."""

    fits = 0

    def fit(self, X, y=None, sample_weight=None):
        CountingScaler.fits += 1
        return super().fit(X, y, sample_weight=sample_weight)


def _wine():
    X, y = load_wine(return_X_y=True)
    return X, hide_labels(y, 5, seed=0)


def _regression():
    """200 points whose 3 features differ in scale by 100x, y = sin(x0) + x1 / 10 on 40 rows."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((200, 3)) * [1.0, 10.0, 100.0]
    y = np.sin(X[:, 0]) + X[:, 1] / 10.0
    y[rng.permutation(200)[40:]] = np.nan
    return X, y


def _prefixed(name, grid):
    return {f"{name}__{k}": v for k, v in grid.items()}


CLASSIFIER = LapRLSClassifier(
    kernel=RBF(gamma=0.05), graph=KNNGraph(n_neighbors=8), out_of_sample="kernel"
)
REGRESSOR = LapRLSRegressor(kernel=RBF(gamma=0.5), graph=KNNGraph(n_neighbors=8), ambient_reg=1e-3)


@pytest.mark.parametrize("transductive", [True, False])
@pytest.mark.parametrize("kind", ["classifier", "regressor"])
def test_bif_search_on_a_pipeline_scores_as_on_the_transformed_points(kind, transductive):
    if kind == "classifier":
        (X, y), model, name = _wine(), CLASSIFIER, "laprlsclassifier"
        grid = {"intrinsic_reg": [0.01, 1.0], "kernel__gamma": [0.02, 0.5, 3.0]}
    else:
        (X, y), model, name = _regression(), REGRESSOR, "laprlsregressor"
        grid = {"intrinsic_reg": [0.01, 1.0], "graph__n_neighbors": [6, 10]}
    cv = SSLKFold(3, transductive=transductive, random_state=0)
    options = dict(cv=cv, random_state=0, hessian="nystrom", n_columns=20)
    with warnings.catch_warnings():
        warnings.simplefilter("error", FitFailedWarning)
        search = BIFSearchCV(
            make_pipeline(StandardScaler(), model), _prefixed(name, grid), **options
        ).fit(X, y)
    X_scaled = StandardScaler().fit_transform(X)
    reference = BIFSearchCV(model, grid, **options).fit(X_scaled, y)
    for k in range(3):
        np.testing.assert_allclose(
            search.cv_results_[f"split{k}_test_score"],
            reference.cv_results_[f"split{k}_test_score"],
            rtol=0,
            atol=1e-10,
        )
    assert search.best_params_ == _prefixed(name, reference.best_params_)
    assert search.n_graph_fits_ == reference.n_graph_fits_
    best = search.best_estimator_
    assert repr(best.steps[-1][1]) == repr(reference.best_estimator_)
    np.testing.assert_allclose(
        best.predict(X) if kind == "regressor" else best.decision_function(X),
        reference.predict(X_scaled)
        if kind == "regressor"
        else reference.decision_function(X_scaled),
        rtol=0,
        atol=1e-10,
    )
    np.testing.assert_array_equal(search.transduction_, reference.transduction_)


def test_bif_search_fits_the_earlier_steps_once_per_setting_of_theirs():
    X, y = _wine()
    grid = {
        "countingscaler__with_std": [False, True],
        "laprlsclassifier__intrinsic_reg": [0.01, 1.0, 100.0],
    }
    CountingScaler.fits = 0
    search = BIFSearchCV(
        make_pipeline(CountingScaler(), CLASSIFIER), grid, cv=SSLKFold(3, random_state=0)
    ).fit(X, y)
    assert CountingScaler.fits == 2  # one per with_std; the refit keeps the best setting's
    assert search.n_graph_fits_ == 2  # one graph per transformed X, reused by the refit
    for with_std in (False, True):
        X_t = StandardScaler(with_std=with_std).fit_transform(X)
        alone = BIFSearchCV(
            CLASSIFIER,
            {"intrinsic_reg": [0.01, 1.0, 100.0]},
            cv=SSLKFold(3, random_state=0),
        ).fit(X_t, y)
        rows = [p["countingscaler__with_std"] == with_std for p in search.cv_results_["params"]]
        np.testing.assert_allclose(
            search.cv_results_["mean_test_score"][rows],
            alone.cv_results_["mean_test_score"],
            rtol=0,
            atol=1e-10,
        )
    scaler = search.best_estimator_[0]
    assert scaler.with_std is search.best_params_["countingscaler__with_std"]
    np.testing.assert_allclose(scaler.mean_, X.mean(axis=0))  # fitted on every row


def test_bif_search_refuses_a_step_that_reads_the_labels():
    X, y = _wine()
    grid = {"laprlsclassifier__intrinsic_reg": [0.1, 1.0]}
    # declared by its tags: refused before any fit
    CountingScaler.fits = 0
    pipe = make_pipeline(CountingScaler(), LinearDiscriminantAnalysis(), CLASSIFIER)
    with pytest.raises(TypeError, match=r"'lineardiscriminantanalysis'.*needs y.*labeled rows"):
        BIFSearchCV(pipe, grid, cv=3).fit(X, y)
    assert CountingScaler.fits == 0
    # found by its fit without y: every point fails with that cause
    pipe = make_pipeline(SelectKBest(k=5), CLASSIFIER)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FitFailedWarning)
        with pytest.raises(ValueError, match=r"All the 2 fits failed.*'selectkbest'.*reads y"):
            BIFSearchCV(pipe, grid, cv=3).fit(X, y)
    # a last step the BIF cannot expand
    with pytest.raises(TypeError, match="got SVC"):
        BIFSearchCV(make_pipeline(StandardScaler(), SVC()), {"svc__C": [1.0]}, cv=3).fit(X, y)


def test_exact_method_on_a_pipeline_and_n_jobs_is_a_parameter():
    X, y = _wine()
    grid = {"laprlsclassifier__intrinsic_reg": [0.01, 1.0]}
    pipe = make_pipeline(StandardScaler(), CLASSIFIER)
    search = BIFSearchCV(pipe, grid, cv=SSLKFold(3, random_state=0), method="exact").fit(X, y)
    assert np.isfinite(search.cv_results_["mean_test_score"]).all()
    # method="exact" runs SSLGridSearchCV's fits, parallel ones included
    # (tests/test_model_selection_pipelines.py)
    assert BIFSearchCV(pipe, grid).get_params()["n_jobs"] is None
    assert clone(BIFSearchCV(pipe, grid, n_jobs=2)).n_jobs == 2
