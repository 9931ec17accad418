"""KernelKMeans: Lloyd's algorithm in feature space, against scikit-learn and a dense reference."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.cluster import KMeans
from sklearn.datasets import make_blobs
from sklearn.metrics import adjusted_rand_score

from semiscale._memory import MemoryBudgetError
from semiscale.kernels import RBF, Linear
from semiscale.models import KernelKMeans


def _blobs(n=300, centers=4, std=2.0, seed=0):
    return make_blobs(n, centers=centers, cluster_std=std, random_state=seed)


@pytest.mark.parametrize("tol", [0.0, 1e-4, 1e-1])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_linear_kernel_is_scikit_learns_kmeans_from_the_same_centres(tol, seed):
    X, _ = _blobs(seed=seed)
    start = np.random.default_rng(seed).choice(len(X), 4, replace=False)
    ours = KernelKMeans(n_clusters=4, kernel=Linear(), init=start, tol=tol).fit(X)
    theirs = KMeans(4, init=X[start], n_init=1, tol=tol, algorithm="lloyd").fit(X)
    np.testing.assert_array_equal(ours.labels_, theirs.labels_)
    assert ours.n_iter_ == theirs.n_iter_
    assert ours.inertia_ == pytest.approx(theirs.inertia_, rel=1e-10)
    np.testing.assert_array_equal(ours.predict(X[:40] + 0.3), theirs.predict(X[:40] + 0.3))


def test_an_empty_cluster_takes_the_farthest_point_as_scikit_learns():
    # two starting centres on the same point: one cluster is empty after the first assignment
    X, _ = _blobs(200, centers=3, std=1.0, seed=3)
    X[1] = X[0]
    start = np.array([0, 1, 50])
    ours = KernelKMeans(n_clusters=3, kernel=Linear(), init=start, tol=0).fit(X)
    theirs = KMeans(3, init=X[start], n_init=1, tol=0, algorithm="lloyd").fit(X)
    np.testing.assert_array_equal(ours.labels_, theirs.labels_)
    assert np.bincount(ours.labels_).min() > 0
    assert ours.inertia_ == pytest.approx(theirs.inertia_, rel=1e-10)


def _dense_kernel_kmeans(K, labels, n_clusters, max_iter=300):
    """Reference: Lloyd from given labels on the whole matrix K (no blocks, no relocation)."""
    for _ in range(max_iter):
        M = np.zeros((K.shape[0], n_clusters))
        M[np.arange(K.shape[0]), labels] = 1.0 / np.bincount(labels, minlength=n_clusters)[labels]
        D = np.diag(K)[:, None] - 2 * K @ M + np.diag(M.T @ K @ M)[None, :]
        new = np.argmin(D, axis=1)
        if np.array_equal(new, labels):
            return labels, np.maximum(D[np.arange(len(labels)), labels], 0).sum()
        labels = new


def test_blocked_under_a_tiny_budget_equals_the_dense_computation(monkeypatch):
    import semiscale.linalg.streaming as streaming

    X, _ = _blobs(400, centers=3, std=1.5, seed=4)
    kernel = RBF(gamma=0.1)
    rows = []
    original = streaming.kernel_blocks

    def spy(kernel, A, B=None, memory_budget=None, **kwargs):
        for sl, K in original(kernel, A, B, memory_budget, **kwargs):
            rows.append(K.shape)
            yield sl, K

    # the blocks of the layer's kernel_matmul (semiscale.linalg.streaming)
    monkeypatch.setattr(streaming, "kernel_blocks", spy)
    start = np.array([0, 100, 200])
    # 200 kB: the n x k arrays (about 40 KiB), the B-side operands and blocks of < 400 rows
    km = KernelKMeans(n_clusters=3, kernel=kernel, init=start, tol=0, memory_budget=200_000)
    km.fit(X)
    # K(X, X) M in blocks of fewer than 400 rows, never the 400 x 400 matrix
    assert any(shape[1] == 400 for shape in rows)
    assert all(shape[0] < 400 for shape in rows if shape[1] == 400)
    K = kernel(X)
    first = np.argmin(np.diag(K)[:, None] - 2 * K[:, start] + np.diag(K)[start][None, :], axis=1)
    labels, inertia = _dense_kernel_kmeans(K, first, 3)
    np.testing.assert_array_equal(km.labels_, labels)
    assert km.inertia_ == pytest.approx(inertia, rel=1e-10)
    np.testing.assert_array_equal(km.predict(X), km.labels_)


def test_kmeans_plus_plus_finds_separated_blobs():
    centres = np.array([[0.0, 0.0], [10.0, 0.0], [0.0, 10.0], [10.0, 10.0], [5.0, 5.0]])
    X, y = _blobs(300, centers=centres, std=0.5, seed=5)
    for kernel in (Linear(), RBF(gamma=0.05), None):
        km = KernelKMeans(n_clusters=5, kernel=kernel, random_state=0).fit(X)
        assert adjusted_rand_score(y, km.labels_) == 1.0, kernel


def test_a_seed_reproduces_the_clustering():
    X, _ = _blobs(seed=6)
    runs = [KernelKMeans(n_clusters=6, init="random", random_state=s).fit(X) for s in (3, 3, 4)]
    np.testing.assert_array_equal(runs[0].labels_, runs[1].labels_)
    assert runs[0].inertia_ == runs[1].inertia_
    assert runs[0].inertia_ != runs[2].inertia_  # another seed starts elsewhere


def test_n_init_keeps_the_lowest_inertia():
    X, _ = _blobs(seed=7, centers=6)
    # the same seed: the first of the ten runs is the single run
    single = KernelKMeans(n_clusters=6, init="random", n_init=1, random_state=0).fit(X)
    best = KernelKMeans(n_clusters=6, init="random", n_init=10, random_state=0).fit(X)
    assert best.inertia_ <= single.inertia_ + 1e-9


def test_float32_data_give_the_float64_clustering():
    X, _ = _blobs(seed=8)
    X32 = X.astype(np.float32)
    a = KernelKMeans(n_clusters=4, kernel=RBF(gamma=0.1), random_state=0).fit(X32)
    b = KernelKMeans(n_clusters=4, kernel=RBF(gamma=0.1), random_state=0).fit(X32.astype(float))
    assert a.X_fit_.dtype == np.float32
    np.testing.assert_array_equal(a.labels_, b.labels_)
    assert a.inertia_ == b.inertia_


def test_clear_errors():
    X, _ = _blobs(20)
    with pytest.raises(ValueError, match="n_samples=20 should be >= n_clusters=21"):
        KernelKMeans(n_clusters=21).fit(X)
    for bad in ([0, 1], [0, 0, 1], [0, 1, 20], [0.0, 1.0, 2.0], [-1, 2, 3]):
        with pytest.raises(ValueError, match="init must be 'k-means\\+\\+', 'random' or the"):
            KernelKMeans(n_clusters=3, init=bad).fit(X)
    with pytest.raises(ValueError, match="'init' parameter"):
        KernelKMeans(n_clusters=3, init="kmeans").fit(X)
    with pytest.warns(RuntimeWarning, match="only one run"):
        KernelKMeans(n_clusters=3, init=[0, 1, 2], n_init=4).fit(X)
    with pytest.raises(MemoryBudgetError, match="memory_budget.*raise memory_budget"):
        KernelKMeans(n_clusters=3, memory_budget=2000).fit(X)


def test_a_learned_kernel_is_fitted_on_the_points_and_clustered_in_blocks():
    # DataDependentKernel (paper 002 §5.2's kernel): fitted on X alone (no labels: random
    # landmarks), kept in kernel_, and the blocked iteration equals the dense one on its matrix
    from semiscale.datasets import make_two_moons
    from semiscale.kernels import DataDependentKernel

    X, _ = make_two_moons(200, noise=0.05, random_state=0)
    kernel = DataDependentKernel(RBF(gamma=0.5), n_landmarks=20, power=2, eta=10.0)
    start = np.array([0, 1])
    km = KernelKMeans(n_clusters=2, kernel=kernel, init=start, tol=0, random_state=0)
    km.fit(X)
    assert km.kernel_.landmarks_.shape == (20,) and kernel.get_params() == km.kernel.get_params()
    again = kernel.fit(X, random_state=0)
    np.testing.assert_array_equal(again.landmarks_, km.kernel_.landmarks_)
    K = again(X)
    first = np.argmin(np.diag(K)[:, None] - 2 * K[:, start] + np.diag(K)[start][None, :], axis=1)
    labels, inertia = _dense_kernel_kmeans(K, first, 2)
    np.testing.assert_array_equal(km.labels_, labels)
    assert km.inertia_ == pytest.approx(inertia, rel=1e-9)


def test_fewer_distinct_clusters_than_asked_warn_as_scikit_learns():
    """Identical points leave a cluster empty at the end: scikit-learn's KMeans warns
    (ConvergenceWarning), so does this one (before: silently one cluster for n_clusters=2)."""
    from sklearn.exceptions import ConvergenceWarning

    X = np.ones((20, 2))
    with pytest.warns(ConvergenceWarning, match="distinct clusters"):
        KMeans(2, n_init=1, random_state=0).fit(X)
    with pytest.warns(ConvergenceWarning, match=r"distinct clusters \(1\).*n_clusters \(2\)"):
        model = KernelKMeans(n_clusters=2, kernel=Linear(), random_state=0).fit(X)
    assert np.unique(model.labels_).size == 1 and model.inertia_ == 0.0
