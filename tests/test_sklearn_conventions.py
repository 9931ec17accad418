"""scikit-learn conventions (issue 11, part 5): n_jobs, random_state, feature names, parameter
validation, KNNGraph.fit_transform, and the estimator's memory budget reaching its graph."""

import joblib
import numpy as np
import pytest

from semiscale._parallel import resolve_n_jobs
from semiscale.graph import KNNGraph, knn

pytestmark = pytest.mark.filterwarnings("ignore::semiscale.graph.DisconnectedGraphWarning")


def _parallel_context(n_jobs):
    if hasattr(joblib, "parallel_config"):  # joblib >= 1.3
        return joblib.parallel_config(n_jobs=n_jobs)
    return joblib.parallel_backend("threading", n_jobs=n_jobs)  # pragma: no cover


# ------------------------------------------------------------------------------------ n_jobs
def test_n_jobs_none_means_one_unless_a_joblib_context_says_otherwise():
    assert resolve_n_jobs(None) == 1
    assert resolve_n_jobs(1) == 1
    assert resolve_n_jobs(-1) == joblib.cpu_count()
    with _parallel_context(3):
        assert resolve_n_jobs(None) == 3
        assert resolve_n_jobs(2) == 2  # an explicit value wins over the context


def test_knngraph_searches_with_one_thread_by_default(monkeypatch):
    seen = []
    kdtree = knn._BACKENDS["kdtree"]

    def spy(X, k, **options):
        seen.append(options["n_jobs"])
        return kdtree(X, k, **options)

    monkeypatch.setitem(knn._BACKENDS, "kdtree", spy)
    X = np.random.default_rng(0).standard_normal((60, 2))
    KNNGraph(n_neighbors=4).fit(X)
    KNNGraph(n_neighbors=4, n_jobs=2).fit(X)
    with _parallel_context(2):
        KNNGraph(n_neighbors=4).fit(X)
    assert seen == [1, 2, 2]
