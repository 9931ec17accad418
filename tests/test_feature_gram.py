"""The sampled-Hessian preconditioner's graph rows through ``ArrayOps.nystrom_feature_gram``.

With a system that hands out its kernel operands (``kernel_rows_operands``, K_ns not stored),
the preconditioner makes one layer call per block of sampled points; on NumPy that call is the
same arithmetic as the features-then-SYRK steps it replaces, so ``Ĝ`` is bit-for-bit the same.
"""

import numpy as np
import pytest
import scipy.sparse as sp

from semiscale.graph import KNNGraph
from semiscale.kernels import RBF
from semiscale.linalg.operators import NystromLapRLSHessian
from semiscale.linalg.ops import ArrayOps, use_ops
from semiscale.solvers.preconditioners import sampled_hessian_preconditioner


class StepByStep(NystromLapRLSHessian):
    """The system without the optional member: the preconditioner's step-by-step path."""

    kernel_rows_operands = None


class Counting(ArrayOps):
    calls = 0

    def nystrom_feature_gram(self, *args, **kwargs):
        self.calls += 1
        return super().nystrom_feature_gram(*args, **kwargs)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("budget", [None, "300KB"], ids=["one-block", "many-blocks"])
def test_the_layer_call_gives_the_same_preconditioner_bit_for_bit(dtype, budget):
    rng = np.random.default_rng(4)
    X = rng.standard_normal((500, 3)).astype(dtype)
    # a Laplacian plus a ridge: the diagonal rows (c > 0) are used too
    L = KNNGraph(n_neighbors=6).fit(X).laplacian_ + 0.3 * sp.identity(500, format="csr")
    labeled = rng.choice(500, 40, replace=False)
    centers = np.union1d(labeled[:20], rng.choice(500, 40, replace=False))  # points: some sampled
    args = (RBF(gamma=0.5), X, centers, labeled, L, 1e-3, 0.5, budget)
    fused, steps = NystromLapRLSHessian(*args, cache=False), StepByStep(*args, cache=False)
    ops = Counting()
    with use_ops(ops):
        P = sampled_hessian_preconditioner(fused, n_rows=200, random_state=0)
    Q = sampled_hessian_preconditioner(steps, n_rows=200, random_state=0)
    assert ops.calls >= (2 if budget else 1)
    assert P.laplacian_rows_ == Q.laplacian_rows_ == 200
    np.testing.assert_array_equal(np.tril(P.G), np.tril(Q.G))
    assert P.graph_trace_share_ == Q.graph_trace_share_


def test_a_stored_kernel_matrix_keeps_the_step_by_step_path():
    rng = np.random.default_rng(5)
    X = rng.standard_normal((300, 3))
    L = KNNGraph(n_neighbors=6).fit(X).laplacian_
    H = NystromLapRLSHessian(RBF(gamma=0.5), X, np.arange(0, 300, 10), np.arange(20), L, 1e-3, 0.5,
                             cache=True)  # fmt: skip
    assert H.kernel_rows_operands(np.arange(5)) is None  # rows read from the stored K_ns
    ops = Counting()
    with use_ops(ops):
        sampled_hessian_preconditioner(H, n_rows=50, random_state=0)
    assert ops.calls == 0
