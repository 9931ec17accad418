"""scikit-learn habits accepted: kernels named by a string, ``RBF(gamma="scale")``, and labels
whose missing values mark the unlabeled points (nullable pandas integers, strings with None)."""

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from sklearn.svm import SVC

from reference_problems import two_moons_ssl
from semiscale._validation import check_classification_targets, unlabeled_rows
from semiscale.kernels import (
    KERNEL_NAMES,
    RBF,
    LaplacianKernel,
    Linear,
    Polynomial,
    resolve_kernel,
)
from semiscale.models import HarmonicClassifier, LapRLSClassifier


# --------------------------------------------------------------------------- resolve_kernel
@pytest.mark.parametrize(
    ("name", "cls"),
    [
        ("rbf", RBF),
        ("laplacian", LaplacianKernel),
        ("linear", Linear),
        ("poly", Polynomial),
        ("polynomial", Polynomial),
    ],
)
def test_resolve_kernel_names(name, cls):
    kernel = resolve_kernel(name)
    assert type(kernel) is cls
    assert kernel.get_params() == cls().get_params()
    assert KERNEL_NAMES[name] is cls


def test_resolve_kernel_gamma_goes_to_kernels_that_have_one():
    assert resolve_kernel("rbf", gamma="local").gamma == "local"
    assert resolve_kernel("laplacian", gamma=0.25).gamma == 0.25
    assert resolve_kernel("poly", gamma=2.0).gamma == 2.0
    assert isinstance(resolve_kernel("linear", gamma="local"), Linear)


def test_resolve_kernel_returns_an_instance_as_is():
    kernel = RBF(gamma=0.5)
    assert resolve_kernel(kernel) is kernel
    assert resolve_kernel(kernel, gamma="local").gamma == 0.5


def test_resolve_kernel_unknown_name_names_parameter_choices_and_fix():
    with pytest.raises(ValueError, match=r"kernel='sigmoid' names no semiscale kernel") as err:
        resolve_kernel("sigmoid")
    for name in KERNEL_NAMES:
        assert repr(name) in str(err.value)
    assert "RBF(gamma=0.5)" in str(err.value)
    with pytest.raises(ValueError, match=r"base_kernel='RBF'"):
        resolve_kernel("RBF", param="base_kernel")


@pytest.mark.parametrize("bad", [None, 3, RBF])
def test_resolve_kernel_refuses_other_types(bad):
    with pytest.raises(TypeError, match="kernel must be a semiscale.kernels.Kernel instance"):
        resolve_kernel(bad)


# --------------------------------------------------------------------------- gamma="scale"
def _svc_gamma(X):
    """The gamma scikit-learn's SVC(gamma="scale") fits on X (its private attribute)."""
    y = np.arange(X.shape[0]) % 2
    return SVC(gamma="scale").fit(X, y)._gamma


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_rbf_gamma_scale_is_svc_formula(dtype):
    rng = np.random.default_rng(0)
    X = (rng.standard_normal((60, 4)) * [1.0, 3.0, 0.1, 7.0] + 5.0).astype(dtype)
    expected = 1.0 / (X.shape[1] * X.astype(np.float64).var())
    gamma = RBF(gamma="scale").resolve(X).gamma
    assert gamma == pytest.approx(expected, rel=1e-12)
    assert gamma == pytest.approx(_svc_gamma(X), rel=1e-5 if dtype is np.float32 else 1e-12)


def test_rbf_gamma_scale_sparse_counts_the_zeros():
    rng = np.random.default_rng(1)
    dense = rng.standard_normal((50, 6)) * (rng.random((50, 6)) < 0.3)
    gamma = RBF(gamma="scale").resolve(sp.csr_matrix(dense)).gamma
    assert gamma == pytest.approx(1.0 / (6 * dense.var()), rel=1e-12)
    assert gamma == pytest.approx(_svc_gamma(sp.csr_matrix(dense)), rel=1e-12)


def test_rbf_gamma_scale_by_blocks_matches_numpy():
    # Many rows force several row blocks of the variance pass.
    X = np.random.default_rng(2).standard_normal((3000, 1500))
    assert RBF(gamma="scale").resolve(X).gamma == pytest.approx(1.0 / (1500 * X.var()), rel=1e-10)


def test_rbf_gamma_scale_unresolved_and_constant_data():
    with pytest.raises(ValueError, match=r"RBF\(gamma='scale'\) is data-dependent"):
        RBF(gamma="scale")(np.ones((2, 2)))
    with pytest.raises(ValueError, match="variance of the data is 0.*pass a numeric gamma"):
        RBF(gamma="scale").resolve(np.ones((5, 3)))


def test_laplacian_kernel_refuses_scale_naming_rbf():
    X = np.random.default_rng(0).standard_normal((10, 2))
    with pytest.raises(ValueError, match=r"'local', 'median', 'mean'; got 'scale'.*RBF's only"):
        LaplacianKernel(gamma="scale").resolve(X)


# --------------------------------------------------------------------------- missing labels
NAMES = np.array(["ant", "bee"])


def _label_forms(y_ssl):
    """The same labels with missing values as the marker, as pandas and CSV files give them."""
    hidden = y_ssl < 0
    ints = [None if h else int(v) for h, v in zip(hidden, y_ssl, strict=True)]
    strings = [None if h else NAMES[v] for h, v in zip(hidden, y_ssl, strict=True)]
    return {
        "Int64 with pd.NA": (pd.array(ints, dtype="Int64"), [0, 1]),
        "Int64 Series with pd.NA": (pd.Series(pd.array(ints, dtype="Int64")), [0, 1]),
        "float with NaN": (np.where(hidden, np.nan, y_ssl.astype(float)), [0, 1]),
        "objects with None": (np.array(strings, dtype=object), list(NAMES)),
        "objects with NaN": (
            np.array([np.nan if s is None else s for s in strings], dtype=object),
            list(NAMES),
        ),
        "string dtype with pd.NA": (pd.array(strings, dtype="string"), list(NAMES)),
        "object Series with None": (pd.Series(strings), list(NAMES)),
        "categorical with NaN": (pd.Series(pd.Categorical(strings)), list(NAMES)),
    }


@pytest.mark.parametrize("Estimator", [HarmonicClassifier, LapRLSClassifier])
def test_missing_labels_mark_unlabeled_points(Estimator):
    X, _, y_ssl = two_moons_ssl(120, 3)
    reference = Estimator().fit(X, y_ssl)
    for form, (y, classes) in _label_forms(y_ssl).items():
        model = Estimator().fit(X, y)
        assert list(model.classes_) == classes, form
        assert model.n_labeled_ == 6, form
        expected = np.asarray(classes, dtype=object)[reference.predict(X)]
        assert list(model.predict(X)) == list(expected), form


def test_check_classification_targets_with_missing_labels():
    targets = check_classification_targets(np.array([0, 1, None, -1, 1], dtype=object), 5)
    assert targets.classes.tolist() == [0, 1] and targets.classes.dtype.kind == "i"
    assert targets.labeled.tolist() == [True, True, False, False, True]
    y = pd.array(["a", pd.NA, "b", "?"], dtype="string")
    targets = check_classification_targets(y, 4, unlabeled="?")
    assert targets.classes.tolist() == ["a", "b"] and targets.n_labeled == 2
    assert unlabeled_rows(y, "?").tolist() == [False, True, False, True]
    # still refused: numbers mixed with strings, and missing labels when all are said labeled
    with pytest.raises(ValueError, match="mixes numbers and strings"):
        check_classification_targets(np.array([0, "a", None], dtype=object), 3)
    with pytest.raises(ValueError, match=r"2 missing labels.*unlabeled=None.*default \(-1\)"):
        check_classification_targets([0.0, np.nan, 1.0, np.nan], 4, unlabeled=None)
    with pytest.raises(ValueError, match="no labeled point"):
        check_classification_targets([None, None], 2)


def test_model_selection_reads_missing_labels_as_unlabeled():
    from semiscale.model_selection import SSLKFold, ssl_cross_validate
    from semiscale.model_selection._markers import labeled_mask

    X, _, y_ssl = two_moons_ssl(160, 5)
    forms = _label_forms(y_ssl)
    for form in ("objects with None", "string dtype with pd.NA", "Int64 with pd.NA"):
        y = forms[form][0]
        np.testing.assert_array_equal(labeled_mask(y, -1), y_ssl >= 0, err_msg=form)
        np.testing.assert_array_equal(labeled_mask(y), y_ssl >= 0, err_msg=form)
    cv = SSLKFold(5, random_state=0)
    expected = ssl_cross_validate(HarmonicClassifier(), X, y_ssl, cv=cv)["test_score"]
    scores = ssl_cross_validate(HarmonicClassifier(), X, forms["objects with None"][0], cv=cv)
    np.testing.assert_allclose(scores["test_score"], expected)


@pytest.mark.parametrize("Estimator", [HarmonicClassifier, LapRLSClassifier])
def test_score_ignores_missing_labels(Estimator):
    X, y, y_ssl = two_moons_ssl(120, 3)
    model = Estimator().fit(X, y_ssl)
    y_eval = np.where(np.arange(120) % 3 == 0, y, -1)  # a third of the points to score
    expected = model.score(X, y_eval)
    for form, (labels, classes) in _label_forms(y_eval).items():
        fitted = Estimator().fit(X, _label_forms(y_ssl)[form][0])
        assert list(fitted.classes_) == classes, form
        if form.startswith("Int64"):  # integers beside pd.NA stay integers
            assert fitted.classes_.dtype.kind == "i", form
        assert fitted.score(X, labels) == pytest.approx(expected), form


def test_searches_keep_integer_classes_beside_pd_na():
    # a nullable Int64 column: np.asarray makes it floats with NaN, so the search's refitted
    # model had classes 0.0, 1.0 where the same model fitted directly has 0, 1
    from semiscale.model_selection import SSLGridSearchCV, SSLKFold, ssl_cross_validate

    X, y, y_ssl = two_moons_ssl(160, 5)
    labels = _label_forms(y_ssl)["Int64 Series with pd.NA"][0]
    cv = SSLKFold(3, random_state=0)
    search = SSLGridSearchCV(LapRLSClassifier(), {"ambient_reg": [1e-6, 1e-3]}, cv=cv)
    search.fit(X, labels)
    assert search.classes_.dtype.kind == "i" and search.predict(X).dtype.kind == "i"
    expected = SSLGridSearchCV(LapRLSClassifier(), {"ambient_reg": [1e-6, 1e-3]}, cv=cv)
    np.testing.assert_allclose(
        search.cv_results_["mean_test_score"], expected.fit(X, y_ssl).cv_results_["mean_test_score"]
    )
    folds = ssl_cross_validate(LapRLSClassifier(), X, labels, cv=cv, return_estimator=True)
    assert all(model.classes_.dtype.kind == "i" for model in folds["estimator"])
