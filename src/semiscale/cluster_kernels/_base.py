r"""What the cluster-kernel transformers share: labels → cut, the kernel, the extension.

Every cluster kernel ends as the same two arrays: the extension weights ``G`` (``m × k``) on
``m`` basis points (all fitted points for the exact kernel, the landmarks for Nyström) and the
eigenvalues.  A point ``x`` gets its row of ``F`` as

.. math::

    F_x = \frac{K(x, X_G)\, G}{\lVert K(x, X_G)\, G \rVert},\qquad
    G = D_G^{-1/2} U_G\, c\, Σ_G^{+} \tilde Σ^{1/2},

the Nyström extension :math:`u_i(x) = c\, d_x^{-1/2} K(x, X_G) D_G^{-1/2} U_{G,i} / σ_{G,i}`
(:func:`~semiscale.cluster_kernels._spectral.extend_eigenvectors`) followed by eqs. (4)–(6)
(:func:`~semiscale.cluster_kernels._spectral.virtual_samples`): the positive factors
:math:`c\, d_x^{-1/2}` of a row cancel in :math:`\tilde D_x^{1/2}`, the row normalization, so a
new point needs neither its degree nor any other point than ``X_G``.
"""

from __future__ import annotations

import sys
import warnings
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from .._progress import log
from .._random import RANDOM_STATE_CONSTRAINT
from .._validation import unlabeled_rows, validate_X
from ..kernels import RBF
from ..linalg.blocked import kernel_matmul
from ._sizing import stream_bytes
from ._spectral import EIGEN_RTOL
from .transfer import TRANSFERS, apply_transfer

__all__ = ["CutWarning", "CUT_OFFSET"]

#: Paper 003's poly-step cut: :math:`h = l + 9` with ``l`` labeled points (``cut="auto"``).
CUT_OFFSET = 9

#: BLAS threads of the eigendecompositions (LAPACK ``syevr``).  On the 2-core development machine
#: shared with other jobs (load 7.5), the top 256 pairs of a 1,420 × 1,420 matrix took 1.08 s in
#: one thread and 8.3 s (median of 3; 7.3–24 s) with OpenBLAS's default threads, the top 512 of
#: 3,195 × 3,195 6.9 s against 46.6 s (``ArrayOps.eigh`` on random Gram matrices): the
#: tridiagonal reduction is half matrix–vector work, so threads gain little and oversubscribed
#: threads lose much.
EIGH_BLAS_THREADS = 1

#: The transfers whose cut matters (the others ignore it).
_CUT_TRANSFERS = ("step", "linear-step", "poly-step")


class CutWarning(UserWarning):
    """The transfer's cut ``h`` reaches past the ``k`` eigenvalues computed.

    With ``cut="auto"`` (``h = l + 9``) and many labels, or a budget that allows only a small
    rank, poly-step becomes a plain square root (step and linear-step keep every eigenvalue):
    ``cut_`` and ``n_components_`` report both numbers.
    """


def _outside_stacklevel():
    """``stacklevel`` of the first frame outside semiscale and scikit-learn (the user's call).

    Counted from the caller of this function's caller (the ``warnings.warn`` site is level 1):
    ``fit`` and ``fit_transform`` reach the warning through scikit-learn's wrappers
    (``_fit_context``, ``set_output``), a meta-estimator through its own ``fit``.
    """
    frame, level = sys._getframe(2), 2
    while frame is not None and frame.f_globals.get("__name__", "").startswith(
        ("semiscale.", "sklearn.")
    ):
        frame, level = frame.f_back, level + 1
    return level


def _virtual_rows(P):
    """Rows of ``P`` scaled to unit length, in place; zero rows stay zero (no kernel weight)."""
    norms = np.sqrt(np.einsum("ij,ij->i", P, P))
    P *= np.divide(1.0, norms, out=np.zeros_like(norms), where=norms > 0)[:, None]
    return P


class _ClusterKernelBase(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """Parameters, label counting, cut and transform shared by the cluster kernels.

    The columns of ``F`` are named ``"<class name in lower case>0"``, ... (scikit-learn's
    ``ClassNamePrefixFeaturesOutMixin``, as its ``Nystroem`` and ``PCA``), which makes
    ``set_output`` available (alone or in a ``Pipeline``).
    """

    _parameter_constraints: dict = {
        "gamma": [
            Interval(Real, 0, None, closed="neither"),
            StrOptions({"median", "local", "mean"}),
        ],
        "transfer": [StrOptions(set(TRANSFERS)), callable],
        "cut": [StrOptions({"auto"}), Interval(Integral, 0, None, closed="left")],
        "memory_budget": [Interval(Real, 0, None, closed="neither"), str, None],
        "unlabeled": "no_validation",
        "n_jobs": [Integral, None],
        "random_state": RANDOM_STATE_CONSTRAINT,
        "verbose": ["verbose"],
    }

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

    # --------------------------------------------------------------------------- labels
    def _labeled_mask(self, y, n):
        """Labeled rows of ``y`` (``unlabeled`` markers and missing values are not)."""
        if y is None:
            return np.zeros(n, dtype=bool)
        if not hasattr(y, "dtype"):
            # a list of string labels with the number marker -1: np.asarray would make the
            # marker the string '-1', a label (models._base._column_or_1d_labels does the same)
            as_object = np.asarray(y, dtype=object)
            if len({isinstance(v, str) for v in as_object.ravel().tolist()}) == 2:
                y = as_object
        y = np.asarray(y)
        if y.ndim != 1 or y.shape[0] != n:
            raise ValueError(
                f"y must be 1-D with one entry per row of X ({n}), got shape {y.shape}; mark "
                f"unlabeled rows with unlabeled={self.unlabeled!r}"
            )
        return ~unlabeled_rows(y, self.unlabeled)

    def _resolve_cut(self, n_labeled, k):
        """``cut_``: ``l + 9`` for ``"auto"``; warns (:class:`CutWarning`) when it is ≥ ``k``."""
        cut = n_labeled + CUT_OFFSET if self.cut == "auto" else int(self.cut)
        if isinstance(self.transfer, str) and self.transfer in _CUT_TRANSFERS and cut >= k:
            warnings.warn(
                f"{type(self).__name__}: the {self.transfer} cut h = {cut}"
                + (f" (l + {CUT_OFFSET}, l = {n_labeled} labeled)" if self.cut == "auto" else "")
                + f" is not below the n_components = {k} eigenvalues computed, so every one is "
                "in the head"
                + (" and poly-step is a plain square root" if self.transfer == "poly-step" else "")
                + "; raise n_components (or memory_budget) past the cut, or pass a smaller cut",
                CutWarning,
                stacklevel=_outside_stacklevel(),
            )
        return cut

    def _kernel(self, X, seed):
        return RBF(gamma=self.gamma).resolve(X, random_state=seed)

    @property
    def _n_features_out(self):
        """Columns of ``F`` (``get_feature_names_out``)."""
        return self.n_components_

    # ------------------------------------------------------------------- the extension
    def _weights(self, U, sigma, degrees, scale, n_eigen_scale=1.0):
        r"""``G = D^{-1/2} U c Σ^+ \tilde Σ^{1/2}`` in ``U``'s buffer, and ``\tilde σ``.

        ``sigma`` are the basis matrix's eigenvalues; ``n_eigen_scale · sigma`` are those the
        transfer sees (``n/s`` for Nyström's eq. 13, 1 for the exact kernel).
        """
        sigma = np.asarray(sigma, dtype=np.float64)
        eigenvalues = np.maximum(n_eigen_scale * sigma, 0.0)
        transferred = apply_transfer(self.transfer, eigenvalues, self.cut_)
        top = sigma.max(initial=0.0)
        inv = np.divide(scale, sigma, out=np.zeros_like(sigma), where=sigma > EIGEN_RTOL * top)
        if degrees is not None:
            d = np.asarray(degrees, dtype=np.float64)
            U *= np.divide(1.0, np.sqrt(d), out=np.zeros_like(d), where=d > 0)[:, None]
        U *= inv * np.sqrt(transferred)
        return U, eigenvalues, transferred

    def _extend(self, X):
        """Rows of ``F`` for the points ``X`` (validated), through ``K(X, X_G) G``."""
        basis = self._basis()
        budget = stream_bytes(
            X.shape[0],
            basis.shape[0],
            basis.shape[1],
            sparse=sp.issparse(X) or sp.issparse(basis),
            nnz=basis.nnz if sp.issparse(basis) else None,
        )
        if X.dtype != np.float64 or basis.dtype != np.float64:
            # a float32 product casts the float64 weights G to float32 first, inside the
            # product's budget (_sizing counts this copy of G)
            budget += self.components_.size * 4
        P = kernel_matmul(self.kernel_, X, basis, self.components_, budget, self.n_jobs)
        return _virtual_rows(np.asarray(P, dtype=np.float64))

    def transform(self, X):
        """The virtual samples of ``X``: one row of ``F`` per point (Nyström extension).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        F : ndarray of shape (n_samples, n_components_), float64
            Unit rows; ``F_new F_fitᵀ`` is the cluster kernel between the new and the fitted
            points.  On the fitted points it reproduces ``fit_transform``'s rows.
        """
        check_is_fitted(self, "components_")
        X = validate_X(self, X, reset=False)
        return self._extend(X)

    def fit(self, X, y=None):
        """Fit the cluster kernel (``y`` only counts the labeled rows: ``cut="auto"``).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,) or None
            Labels with ``unlabeled`` marking unlabeled rows; only their number ``l`` is used
            (``cut="auto"`` is ``h = l + 9``).  None: no labeled row, ``l = 0``.

        Returns
        -------
        self
        """
        self._fit(X, y, want_F=False)
        return self

    def fit_transform(self, X, y=None):
        """Fit and return the virtual samples of the fitted points, ``F`` (eqs. 4–6).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,) or None
            As in :meth:`fit`.

        Returns
        -------
        F : ndarray of shape (n_samples, n_components_), float64
        """
        return self._fit(X, y, want_F=True)

    def _log_sizes(self, what):
        log(f"[{type(self).__name__}] {what}", self.verbose, level=2)
