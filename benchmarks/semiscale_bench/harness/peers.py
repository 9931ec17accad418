"""What reproductions compare the library's estimators with, and how they count a predictor.

:class:`LabeledOnlySVC` is the supervised baseline the semi-supervised papers plot beside their
methods: scikit-learn's ``SVC`` on the labeled points alone, with the width the others use.
:func:`expansions` counts the kernel expansions of a fitted predictor (a size curve's
``CurveSpec.expansions``): the sparsity a paper compares.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin

from semiscale.kernels import RBF

__all__ = ["LabeledOnlySVC", "expansions"]


class LabeledOnlySVC(ClassifierMixin, BaseEstimator):
    """scikit-learn's ``SVC`` on the labeled points alone (``y == -1``: unlabeled, ignored).

    The RBF width is resolved on every training point, labeled or not, as the semi-supervised
    methods' (a data-dependent ``gamma`` on two points would be meaningless).
    """

    def __init__(self, kernel=None, C=1000.0):
        self.kernel = kernel
        self.C = C

    def fit(self, X, y, laplacian=None):
        from sklearn.svm import SVC

        y = np.asarray(y)
        labeled = y != -1
        gamma = (self.kernel or RBF(gamma="mean")).resolve(X).gamma
        self.svc_ = SVC(kernel="rbf", gamma=gamma, C=self.C).fit(X[labeled], y[labeled])
        self.classes_ = self.svc_.classes_
        self.n_support_ = int(self.svc_.support_.size)
        return self

    def predict(self, X):
        return self.svc_.predict(X)


def expansions(est) -> int:
    """Kernel expansions of a fitted predictor: the points whose coefficient is not zero.

    The support vectors of a :class:`LabeledOnlySVC`; the rows of ``dual_coef_`` with a
    non-zero entry; every training point (``X_fit_``) of an estimator without ``dual_coef_``.
    """
    if isinstance(est, LabeledOnlySVC):
        return est.n_support_
    coef = getattr(est, "dual_coef_", None)
    if coef is None:
        return int(est.X_fit_.shape[0])
    coef = np.asarray(coef).reshape(coef.shape[0], -1)
    return int(np.count_nonzero(np.any(coef != 0, axis=1)))
