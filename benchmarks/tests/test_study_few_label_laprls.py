"""Smoke test of the few-label LapRLS study's functions (issue 12, part 3)."""

import numpy as np

from semiscale.datasets import make_two_moons
from semiscale.graph import KNNGraph
from semiscale.models import LapRLSClassifier
from semiscale_bench.studies.few_label_laprls import fits as study
from semiscale_bench.studies.few_label_laprls import report as study_report


def test_target_codings_are_centred_and_balanced():
    y_ssl = np.array([0, 0, 0, 1, 2, -1, -1])
    codings = study.target_codings(y_ssl, np.array([0, 1, 2]))
    labeled = y_ssl != -1
    for name in ("zero-mean", "balanced"):
        np.testing.assert_allclose(codings[name][labeled].sum(axis=0), 0.0, atol=1e-12)
        assert not codings[name][~labeled].any()
    # every class carries the same total positive source in the balanced coding
    balanced = codings["balanced"]
    totals = [balanced[y_ssl == c, c].sum() for c in range(3)]
    np.testing.assert_allclose(totals, totals[0])
    np.testing.assert_array_equal(codings["±1"][0], [1.0, -1.0, -1.0])


def test_fit_codings_reproduces_the_classifier():
    X, y = make_two_moons(120, noise=0.1, random_state=0)
    y_ssl = study.per_class_labels(y, 2, np.random.default_rng(0))
    L = KNNGraph(n_neighbors=10).fit(X).laplacian_
    pred = study.fit_codings(X, y_ssl, L, 10.0, seed=0)
    assert set(pred) == set(study.CODINGS)
    model = LapRLSClassifier(intrinsic_reg=10.0, random_state=0).fit(X, y_ssl, laplacian=L)
    # the classifier fits the recommended coding since issue 12 part 3 (±1 before it)
    np.testing.assert_array_equal(pred[study.RECOMMENDED_CODING], model.transduction_)
    assert 0.0 <= study.accuracy(pred["balanced"], y, y_ssl) <= 1.0
    assert study.rule(2.0, 100, 4) == 50.0


def test_class_mass_normalize_and_report(tmp_path):
    scores = np.array([[1.0, 0.0], [0.5, 0.2], [0.4, 0.3]])
    out = study.class_mass_normalize(scores, np.array([0.5, 0.5]))
    np.testing.assert_allclose(out.sum(axis=0), [0.5, 0.5])
    records = [
        {
            "step": "grid",
            "dataset": name,
            "n": 10,
            "seed": 0,
            "draw": "per-class",
            "m": 1,
            "n_labeled": 2,
            "power": 1,
            "fit_intercept": False,
            "rho": rho,
            "accuracy": dict.fromkeys(study.CODINGS, 0.5),
        }
        for rho in study.RHOS
        for name in ("usps", "two moons")
    ]
    results = {
        "records": records,
        "summary": study.summarize(records),
        "commit": "x",
        "machine": {"platform": "p", "python": "3"},
    }
    study_report.write_report(results, tmp_path)
    report = (tmp_path / "README.md").read_text()
    assert "two moons" in report and "1·n/l" in report
