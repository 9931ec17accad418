r"""The exact LapRLS system in Nyström form: every training point a center (``s = n``).

With all points as centers the blocked operator's normal equations become
``H = K (J K + λ_A I + λ_I L K)`` and ``z = K J y``, so ``f = K α`` is the exact LapRLS solution
of paper 000 eq. (3); one ``n × n`` kernel matrix serves as both ``K_ss`` and the ``K_ns`` cache.
A subclass of :class:`~semiscale.linalg.operators.NystromLapRLSHessian` in a module of its own:
this module imports the operator's, never the reverse (``semiscale.linalg`` exports both).
"""

from __future__ import annotations

import re

import numpy as np

from .._memory import MemoryBudgetError
from .operators import NystromLapRLSHessian
from .ops import get_ops

__all__ = ["FullLapRLSHessian"]


def _exact_wording(message: str, n: int) -> str:
    """A Nyström operator's budget refusal, reworded for exact LapRLS (s = n).

    Issue 26: ``LapRLSClassifier(solver="cg", memory_budget="5MB")`` on 6,000 points was
    refused with the Nyström advice "use fewer centers", which exact LapRLS does not have.  With
    the graph term the exact CG holds the ``n × n`` kernel matrix (both ``K_ss`` and the
    ``K_ns`` cache); its fixes are a larger budget, or a Nyström estimator for large n.
    """
    what = f"exact LapRLS by CG/PCG on n={n} points, which holds the n x n kernel matrix K"
    message = re.sub(
        r"for the Nyström system with n=\d+ points and s=\d+ centers", f"for {what}", message
    )
    message = message.replace("cannot even hold K_ss (", f"cannot hold {what} (")
    message = message.replace("K_ss (", "K (")
    return message.replace(
        "or use fewer centers",
        "or use NystromLapRLSClassifier or NystromLapRLSRegressor (s < n centers) for large n",
    )


class FullLapRLSHessian(NystromLapRLSHessian):
    """The exact LapRLS system in Nyström form, with every training point a center (``s = n``).

    ``H = K (J K + λ_A I + λ_I L K)`` and ``z = K J y``; ``f = K α`` solves paper 000 eq. (3).
    Same parameters as :class:`NystromLapRLSHessian` without ``centers``.

    Here ``K_ns = K_ss = K``: with a graph term one ``n × n`` array serves as both (computed with
    exact unit self-similarities and made exactly symmetric), so caching ``K_ns`` costs nothing
    beyond ``K_ss``.
    """

    def _decide_cache(self, cache):
        if self._rows is None and cache is not False:
            return True  # K_ns is K_ss, which must fit anyway
        return super()._decide_cache(cache)

    def _cache(self):
        if self._rows is not None:
            return super()._cache()
        return self.kernel_ss()

    def _use_cache(self, *, fill: bool = False) -> bool:
        if self._rows is None:  # K is K_ss, computed anyway for the ambient term
            return self.cached_
        return super()._use_cache(fill=fill)

    @property
    def cache_filled_(self) -> bool:
        """Whether ``K`` (with a graph: ``K_ss`` itself) or the stored ``K_ll`` is filled."""
        if self._rows is None:
            return self.cached_ and self._K_ss is not None
        return self._K_rows is not None

    def _check_budget(self):
        """The operator's refusal, worded for exact LapRLS (see :func:`_exact_wording`)."""
        try:
            super()._check_budget()
        except MemoryBudgetError as error:
            raise MemoryBudgetError(_exact_wording(str(error), self.n_samples_)) from None

    def kernel_ss(self):
        """``K(X, X)``, exactly symmetric (computed once)."""
        if self._K_ss is None:
            ops = get_ops()
            K = ops.kernel_matrix(self.kernel, self.X, None, self.memory_budget, self.n_jobs)
            # BLAS may round K[i, j] and K[j, i] differently: CG needs a symmetric operator.
            self._K_ss = ops.symmetrize(np.asarray(K, dtype=self.dtype))
        return self._K_ss

    def __init__(
        self,
        kernel,
        X,
        labeled_index,
        laplacian,
        ambient_lambda,
        intrinsic_lambda,
        memory_budget=None,
        *,
        n_jobs=1,
        reserved=0,
        n_columns=None,
    ):
        try:
            super().__init__(
                kernel,
                X,
                np.arange(X.shape[0]),
                labeled_index,
                laplacian,
                ambient_lambda,
                intrinsic_lambda,
                memory_budget,
                n_jobs=n_jobs,
                reserved=reserved,
                n_columns=n_columns,
            )
        except MemoryBudgetError as error:
            raise MemoryBudgetError(_exact_wording(str(error), X.shape[0])) from None
