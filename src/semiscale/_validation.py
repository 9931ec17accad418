"""Input checks for semi-supervised estimators (DESIGN.md §3, "Unlabeled points").

Classifiers mark an unlabeled point with ``y == unlabeled`` (default ``-1``, scikit-learn's
convention) or with a missing value (``None``, ``NaN``, pandas' ``pd.NA``: a blank label cell of a
CSV file, a nullable ``Int64`` or ``string`` column); regressors with ``NaN``.  Every error names
the offending parameter and the fix.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from sklearn.utils.validation import check_array

from ._arrays import check_dask_array, is_dask_array
from ._pairs import _check_magnitude

try:  # scikit-learn >= 1.6
    from sklearn.utils.validation import validate_data as _sklearn_validate_data
except ImportError:  # pragma: no cover - scikit-learn < 1.6: the estimator method

    def _sklearn_validate_data(estimator, X, **check_params):
        return estimator._validate_data(X, **check_params)


__all__ = [
    "ClassificationTargets",
    "check_laplacian",
    "check_regression_targets",
    "check_X",
    "balanced_targets",
    "check_classification_targets",
    "label_array",
    "missing_labels",
    "one_vs_rest_targets",
    "unlabeled_rows",
    "validate_X",
]

FLOAT_DTYPES = (np.float64, np.float32)


def check_X(X, *, accept_sparse=("csr", "csc", "coo"), name: str = "X", min_samples: int = 1):
    """Validate a feature matrix: 2-D, numeric, finite, float32/float64 (sparse allowed), with
    values small enough that squared distances do not overflow.

    Returns a C-contiguous ndarray or a CSR matrix.
    """
    X = check_array(
        X,
        accept_sparse=accept_sparse,
        dtype=FLOAT_DTYPES,
        ensure_min_samples=min_samples,
        input_name=name,
    )
    return _finish_X(X, name)


def _finish_X(X, name):
    if sp.issparse(X):
        X = X.tocsr()
    _check_magnitude(X.data if sp.issparse(X) else X, X.shape[1], name)
    return X


def validate_X(estimator, X, *, reset: bool, accept_sparse=("csr", "csc", "coo"), min_samples=1):
    """:func:`check_X` with scikit-learn's bookkeeping of the features an estimator was fitted on.

    With ``reset=True`` (in ``fit``) it sets ``estimator.n_features_in_`` and, when ``X`` has
    string column names (a pandas DataFrame), ``estimator.feature_names_in_`` (deleting a stale
    one otherwise).  With ``reset=False`` (``predict``, ``decision_function``, ``score``) it
    checks ``X`` against them, as every scikit-learn estimator does:

    - another number of features, or other column names or the same names in another order:
      ``ValueError`` ("The feature names should match those that were passed during fit.");
    - names at fit but not now, or now but not at fit: a ``UserWarning``.

    This is scikit-learn's ``validate_data`` (the ``_validate_data`` method before 1.6).

    A ``dask.array`` ``X`` is accepted by estimators whose fit contract declares ``dask``
    (:class:`~semiscale.models._contract.FitContract`) and stays a dask array
    (:func:`_validate_dask_X`); other estimators refuse it with a ``TypeError``.
    """
    if is_dask_array(X):
        return _validate_dask_X(estimator, X, reset=reset, min_samples=min_samples)
    X = _sklearn_validate_data(
        estimator,
        X,
        reset=reset,
        accept_sparse=accept_sparse,
        dtype=FLOAT_DTYPES,
        ensure_min_samples=min_samples,
    )
    return _finish_X(X, "X")


def _validate_dask_X(estimator, X, *, reset: bool, min_samples: int):
    """A dask ``X`` checked where it lives: lazily (dtype, shape, one chunk along the columns),
    then finiteness and magnitude in one pass over its chunks on the workers.

    Only the estimators whose fit contract declares ``dask`` take one (read off the class, so
    that this module imports nothing above it).
    """
    contract = getattr(type(estimator), "_fit_contract", None)
    if not getattr(contract, "dask", False):
        raise TypeError(
            f"X is a dask array, which {type(estimator).__name__} cannot fit or predict where it "
            "lives: pass X.compute() (a NumPy array), or use NystromLapRLSClassifier / "
            "NystromLapRLSRegressor, which run on the Dask workers"
        )
    import dask
    import dask.array as da

    X = check_dask_array(X)
    if X.shape[0] < min_samples:
        raise ValueError(
            f"Found array with {X.shape[0]} sample(s) (shape={X.shape}) while a minimum of "
            f"{min_samples} is required."
        )
    if X.shape[1] < 1:
        raise ValueError(
            f"Found array with 0 feature(s) (shape={X.shape}) while a minimum of 1 is required."
        )
    if reset:
        estimator.n_features_in_ = X.shape[1]
        estimator.__dict__.pop("feature_names_in_", None)
    elif X.shape[1] != estimator.n_features_in_:
        raise ValueError(
            f"X has {X.shape[1]} features, but {type(estimator).__name__} is expecting "
            f"{estimator.n_features_in_} features as input."
        )
    # one pass over the chunks: both reductions share the tasks that read each chunk
    finite, largest = dask.compute(da.isfinite(X).all(), abs(X).max())
    if not finite:
        raise ValueError("Input X contains NaN or infinity.")
    _check_magnitude(np.asarray([largest], dtype=X.dtype), X.shape[1], "X")
    return X


@dataclass(frozen=True)
class ClassificationTargets:
    """Validated semi-supervised class labels.

    Attributes
    ----------
    classes : ndarray of shape (n_classes,)
        Sorted distinct labels seen on labeled points.
    codes : ndarray of shape (n_samples,)
        Index into ``classes`` for labeled points, ``-1`` for unlabeled ones.
    labeled : ndarray of bool, shape (n_samples,)
        True where the point carries a label.
    """

    classes: np.ndarray
    codes: np.ndarray
    labeled: np.ndarray

    @property
    def n_labeled(self) -> int:
        return int(self.labeled.sum())


def _unlabeled_mask(y: np.ndarray, unlabeled) -> np.ndarray:
    if unlabeled is None:
        return np.zeros(y.shape[0], dtype=bool)
    if isinstance(unlabeled, float) and np.isnan(unlabeled):
        if y.dtype.kind != "f":
            return np.zeros(y.shape[0], dtype=bool)
        return np.isnan(y)
    return y == unlabeled


def label_array(y):
    """A pandas nullable column (``Int64``, ``boolean``, ``string``, categorical) as a NumPy
    array: of objects when it holds ``pd.NA`` (NumPy would turn nullable integers into floats),
    else as ``np.asarray`` gives it.  Anything else is returned as it is.
    """
    dtype = getattr(y, "dtype", None)
    if dtype is not None and not isinstance(dtype, np.dtype) and hasattr(dtype, "na_value"):
        values = np.asarray(y, dtype=object)
        return values if missing_labels(values).any() else np.asarray(y)
    return y


def missing_labels(y) -> np.ndarray:
    """Boolean mask of the missing entries of a label array.

    Missing: ``NaN`` in a float array; ``None``, ``NaN``, pandas' ``pd.NA`` and ``pd.NaT`` in an
    object array.  Other dtypes (integers, strings) have none.
    """
    y = np.asarray(y)
    if y.dtype.kind == "f":
        return np.isnan(y)
    if y.dtype.kind != "O":
        return np.zeros(y.shape, dtype=bool)
    pandas = sys.modules.get("pandas")  # pd.NA can only be in y when pandas is imported
    if pandas is not None:
        return np.asarray(pandas.isna(y), dtype=bool)
    flat = [v is None or (isinstance(v, float) and math.isnan(v)) for v in y.ravel().tolist()]
    return np.array(flat, dtype=bool).reshape(y.shape)


def unlabeled_rows(y, unlabeled) -> np.ndarray:
    """Rows of a classifier's 1-D ``y`` that carry no label: ``y == unlabeled`` or missing.

    A missing value (:func:`missing_labels`) is never a class, so it marks an unlabeled row
    whatever the marker (with ``unlabeled=None`` too: such a row cannot be scored).
    """
    y = np.asarray(label_array(y))
    missing = missing_labels(y)
    rows = missing.copy()
    # compared on the present values only: pd.NA == marker is neither True nor False
    rows[~missing] = _unlabeled_mask(y[~missing], unlabeled)
    return rows


def _equals(value, marker) -> bool:
    try:
        return bool(value == marker)
    except (TypeError, ValueError):
        return False


def _check_not_mixed(y, unlabeled) -> None:
    """Refuse a list that mixes numbers and strings (numpy would make every label a string)."""
    if isinstance(y, np.ndarray) and y.dtype != object:
        return
    try:
        values = np.asarray(y, dtype=object).ravel()
    except ValueError:  # ragged: the shape check after this reports it
        return
    values = values[~missing_labels(values)].tolist()  # missing values mark unlabeled points
    # the marker may be of another type than the labels (numbers marked with 'unlabeled')
    labeled_values = [v for v in values if unlabeled is None or not _equals(v, unlabeled)]
    if len({isinstance(v, str) for v in labeled_values}) == 2:
        marker = ""
        if str(unlabeled) in {v for v in values if isinstance(v, str)}:
            marker = f" -- the marker {str(unlabeled)!r} as a string would become a class"
        raise ValueError(
            f"y mixes numbers and strings{marker}; give labels of one type (all numbers, with "
            f"unlabeled={unlabeled!r} marking unlabeled points, or all strings with a string "
            "marker such as unlabeled='-1')"
        )


def check_classification_targets(y, n_samples: int, *, unlabeled=-1) -> ClassificationTargets:
    """Validate class labels where ``y == unlabeled`` or a missing value marks unlabeled points.

    A missing value (``None``, ``NaN``, pandas' ``pd.NA``, see :func:`missing_labels`) is never
    a class: it marks an unlabeled point beside the marker ``unlabeled``, so a nullable
    ``Int64`` column or strings with blanks need no marker of their own.  The classes are the
    present labels in their own type (integers stay integers beside ``pd.NA``).

    Raises
    ------
    ValueError
        Wrong length or dimension, missing labels with ``unlabeled=None`` (every point
        labeled), no labeled point, or fewer than two classes among the labeled points.
    """
    _check_not_mixed(y, unlabeled)
    y = np.asarray(label_array(y))
    if y.ndim == 2 and y.shape[1] == 1:
        y = y.ravel()
    if y.ndim != 1:
        raise ValueError(f"y must be 1-D (one label per sample), got shape {y.shape}")
    if y.shape[0] != n_samples:
        raise ValueError(f"y has {y.shape[0]} labels but X has {n_samples} samples")
    missing = missing_labels(y)
    if unlabeled is None and missing.any():
        raise ValueError(
            f"y has {int(missing.sum())} missing labels (None, NaN or pd.NA) but unlabeled=None "
            "says that every point is labeled; fill them in, or leave unlabeled at its default "
            "(-1) so that missing labels mark unlabeled points"
        )
    mask_unlabeled = unlabeled_rows(y, unlabeled)
    labeled = ~mask_unlabeled
    if missing.any() and y.dtype == object:
        # the present labels in their own dtype (ints beside pd.NA were objects)
        present = np.asarray(y[labeled].tolist())
        y = np.empty(n_samples, dtype=present.dtype)
        y[labeled] = present
    if y.dtype.kind in "fc" and not np.isfinite(y[labeled]).all():
        raise ValueError("y contains infinite labels")
    if not labeled.any():
        raise ValueError(
            f"y has no labeled point: every label equals the unlabeled marker {unlabeled!r}; "
            "label at least one point per class"
        )
    classes, codes_labeled = np.unique(y[labeled], return_inverse=True)
    if classes.shape[0] < 2:
        hint = ""
        if mask_unlabeled.any():
            hint = (
                f"; note that {unlabeled!r} marks unlabeled points ({int(mask_unlabeled.sum())} "
                f"here). If {unlabeled!r} is a class, pass another marker to the estimator, e.g. "
                "unlabeled=None when every point is labeled"
            )
        raise ValueError(
            f"the labeled points contain only one class ({classes[0]!r}); a classifier needs at "
            f"least two classes among the labeled points{hint}"
        )
    codes = np.full(n_samples, -1, dtype=np.intp)
    codes[labeled] = codes_labeled
    return ClassificationTargets(classes=classes, codes=codes, labeled=labeled)


def check_regression_targets(y, n_samples: int) -> tuple[np.ndarray, np.ndarray]:
    """Validate real targets where ``NaN`` marks unlabeled points.

    Returns
    -------
    y : ndarray of float64, shape (n_samples,) or (n_samples, n_targets)
    labeled : ndarray of bool, shape (n_samples,)
    """
    try:
        y = np.asarray(y, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"y must be numeric for a regressor: {exc}") from None
    if y.ndim not in (1, 2):
        raise ValueError(f"y must be 1-D or 2-D, got shape {y.shape}")
    if y.shape[0] != n_samples:
        raise ValueError(f"y has {y.shape[0]} targets but X has {n_samples} samples")
    if np.isinf(y).any():
        raise ValueError("y contains infinite values; mark unlabeled targets with NaN")
    nan = np.isnan(y)
    if y.ndim == 2:
        partially = nan.any(axis=1) & ~nan.all(axis=1)
        if partially.any():
            raise ValueError(
                "y has rows where only some targets are NaN; a row is either labeled (all targets "
                "finite) or unlabeled (all NaN)"
            )
        nan = nan.all(axis=1)
    labeled = ~nan
    if not labeled.any():
        raise ValueError("y has no labeled point: every target is NaN (the unlabeled marker)")
    return y, labeled


def one_vs_rest_targets(targets: ClassificationTargets) -> np.ndarray:
    """Least-squares targets: ±1 per class on labeled rows, 0 on unlabeled rows.

    Binary problems get a single column (+1 for ``classes[1]``); multiclass problems one column
    per class (one-vs-rest), solved together as several right-hand sides.
    """
    n_classes = targets.classes.shape[0]
    codes = targets.codes
    labeled = targets.labeled
    if n_classes == 2:
        Y = np.zeros((codes.shape[0], 1))
        Y[labeled, 0] = np.where(codes[labeled] == 1, 1.0, -1.0)
        return Y
    Y = np.zeros((codes.shape[0], n_classes))
    Y[labeled] = -1.0
    Y[np.flatnonzero(labeled), codes[labeled]] = 1.0
    return Y


def balanced_targets(targets: ClassificationTargets) -> np.ndarray:
    """Class-balanced, zero-mean least-squares targets; 0 on unlabeled rows.

    With C classes, l labeled points and n_c of them in class c, the labeled row i of class c
    gets

    .. math::  Y_i = \\Big(e_c - \\frac{1}{C}\\mathbf{1}\\Big)\\,\\frac{l}{C\\,n_c},

    so that every row sums to 0 and every class carries the same total weight, whatever its
    label count.  Binary problems get a single column: ``+l/(2 n_1)`` for ``classes[1]`` and
    ``-l/(2 n_0)`` for ``classes[0]`` (exactly ±1 when the two counts are equal).  The least-
    squares classifiers fit these columns (the coding that
    ``benchmarks/results/few_label_laprls/`` measured as the robust one when the label counts
    of the classes differ); :func:`one_vs_rest_targets` is the plain ±1 coding.

    Examples
    --------
    >>> import numpy as np
    >>> from semiscale._validation import balanced_targets, check_classification_targets
    >>> t = check_classification_targets(np.array([0, 0, 0, 1, -1]), 5)
    >>> balanced_targets(t).ravel().tolist()
    [-0.6666666666666666, -0.6666666666666666, -0.6666666666666666, 2.0, 0.0]
    """
    counts = _label_counts(targets)
    return _weighted_targets(targets, counts.sum() / (counts.shape[0] * counts))


def zero_mean_targets(targets: ClassificationTargets) -> np.ndarray:
    """Zero-mean least-squares targets (one-hot minus the labeled mean); 0 on unlabeled rows.

    With ``ȳ`` the labeled points' class proportions, the labeled row i of class c gets
    ``e_c − ȳ`` (Poisson learning's sources); binary problems get a single column,
    ``2 (1[class 1] − ȳ_1)``: ``2 ȳ_0`` for ``classes[1]`` and ``−2 ȳ_1`` for ``classes[0]``.
    With equal label counts these are :func:`balanced_targets` exactly (±1 for two classes);
    with unequal counts they keep the labeled proportions as the class prior, where
    :func:`balanced_targets` weighs every class alike (``balanced_targets=True``).

    Examples
    --------
    >>> import numpy as np
    >>> from semiscale._validation import check_classification_targets, zero_mean_targets
    >>> t = check_classification_targets(np.array([0, 0, 0, 1, -1]), 5)
    >>> zero_mean_targets(t).ravel().tolist()
    [-0.5, -0.5, -0.5, 1.5, 0.0]
    """
    return _weighted_targets(targets, np.ones(targets.classes.shape[0]))


def _label_counts(targets: ClassificationTargets) -> np.ndarray:
    rows = np.flatnonzero(targets.labeled)
    return np.bincount(targets.codes[rows], minlength=targets.classes.shape[0]).astype(float)


def _weighted_targets(targets: ClassificationTargets, weights: np.ndarray) -> np.ndarray:
    """Rows ``(e_c − m)·w_c`` with ``m_k = n_k w_k / Σ_j n_j w_j`` (zero weighted mean).

    Class weights ``w = 1`` give :func:`zero_mean_targets`, ``w_c = l/(C n_c)``
    :func:`balanced_targets`; two classes keep the difference of the two columns.
    """
    codes = targets.codes
    rows = np.flatnonzero(targets.labeled)
    mass = _label_counts(targets) * weights
    Y = np.zeros((codes.shape[0], weights.shape[0]))
    Y[rows] = -mass / mass.sum()
    Y[rows, codes[rows]] += 1.0
    Y[rows] *= weights[codes[rows]][:, None]
    return Y[:, 1:] - Y[:, :1] if weights.shape[0] == 2 else Y


#: A Rayleigh quotient below ``-PSD_RTOL · max|L_ii|`` proves a matrix is not PSD.
PSD_RTOL = 1e-6

#: Iterations of the LOBPCG search for a negative direction (run only when diagonal dominance
#: does not already prove the matrix PSD: normalized or iterated Laplacians, negative weights).
PSD_SEARCH_ITER = 40

#: Above this size the search is skipped (about a second there on one core); the sign,
#: diagonal and dominance checks still run.
PSD_SEARCH_MAX_N = 50_000

#: Below this size the smallest eigenvalue is computed densely.
PSD_DENSE_MAX = 200


def _min_rayleigh_quotient(L: sp.csr_matrix) -> float:
    """An upper bound of λ_min(L): the smallest Rayleigh quotient found (a one-sided test).

    A negative value is a proof that ``L`` is not positive semi-definite; a non-negative one is
    not a proof of the contrary, but a short LOBPCG search finds the negative directions that
    negative edge weights or a too-small diagonal create.  Seeded: the result is reproducible.
    """
    import contextlib
    import warnings

    n = L.shape[0]
    if n <= PSD_DENSE_MAX:
        return float(np.linalg.eigvalsh(L.toarray())[0])
    from scipy.sparse.linalg import lobpcg

    V = np.random.default_rng(0).standard_normal((n, 4))
    # a degenerate start leaves V as it is: its quotients are still an upper bound
    with warnings.catch_warnings(), contextlib.suppress(np.linalg.LinAlgError, ValueError):
        warnings.simplefilter("ignore")
        _, V = lobpcg(L, V, largest=False, maxiter=PSD_SEARCH_ITER, tol=1e-3)
    LV = L @ V
    quotients = np.einsum("ij,ij->j", V, LV) / np.einsum("ij,ij->j", V, V)
    return float(quotients.min())


def _check_laplacian_signs(L: sp.csr_matrix, name: str) -> None:
    """Refuse what cannot be a graph Laplacian (of any normalization, power or ridge).

    * a negative diagonal entry (``e_iᵀ L e_i < 0``: not PSD) — usually ``W - D`` for ``D - W``;
    * no negative off-diagonal entry but some positive one: an adjacency / weight matrix ``W``
      (every row of ``D - W`` or of its powers with a non-zero diagonal has a negative entry);
    * not positive semi-definite: diagonal dominance proves PSD for ``D - W (+ ridge)`` at no
      cost, and a matrix without positive off-diagonal entries whose non-dominant rows share one
      diagonal value is taken as a normalized Laplacian; otherwise (iterated Laplacians,
      negative weights, a diagonal smaller than the degrees) a short seeded search (LOBPCG,
      up to ``PSD_SEARCH_MAX_N`` points) looks for a direction with ``xᵀ L x < 0``.
    """
    diag = L.diagonal()
    scale = float(np.abs(diag).max()) if diag.size else 0.0
    off = (L - sp.diags(diag)).tocsr()
    off.eliminate_zeros()
    scale = max(scale, float(np.abs(off.data).max()) if off.nnz else 0.0)
    if scale == 0.0:
        return  # no edges: the intrinsic term is refused later, with its own message
    tol = PSD_RTOL * scale
    has_positive = bool(off.nnz and off.data.max() > tol)
    has_negative = bool(off.nnz and off.data.min() < -tol)
    negative_weights = (
        f"it has {int((off.data > tol).sum())} positive off-diagonal entries: negative "
        "weights? Graph weights must be >= 0 (L = D - W with W >= 0)"
    )
    if diag.min() < -tol:
        cause = (
            negative_weights
            if has_positive and has_negative
            else "a Laplacian's diagonal holds the degrees (>= 0): did you pass W - D instead "
            "of L = D - W?"
        )
        raise ValueError(
            f"{name} is not positive semi-definite: it has negative diagonal entries "
            f"(min {diag.min():.3g}); {cause}. Build L with semiscale.graph.laplacian(W)"
        )
    if has_positive and not has_negative:
        raise ValueError(
            f"{name} has no negative off-diagonal entry but positive ones: this looks like an "
            "adjacency/weight matrix W; pass laplacian(W) (semiscale.graph.laplacian) or "
            "graph=PrecomputedGraph(W, X)"
        )
    off_sums = np.asarray(abs(off).sum(axis=1)).ravel()
    not_dominant = off_sums > diag * (1 + 1e-8) + 1e-12 * scale
    if not not_dominant.any():
        return  # diagonally dominant with a non-negative diagonal: PSD
    if not has_positive:
        d = diag[not_dominant]
        if d.max() - d.min() <= 1e-8 * d.max():
            return  # normalized form c·I - D^-1/2 W D^-1/2 (c = 1 + ridge): PSD, not searched
    if L.shape[0] > PSD_SEARCH_MAX_N:
        return  # the search would cost seconds: only the checks above at this size
    lam = _min_rayleigh_quotient(L)
    if lam >= -tol:
        return
    if has_positive:
        cause = negative_weights
    else:
        row_sums = np.asarray(L.sum(axis=1)).ravel()
        cause = (
            f"its row sums go down to {row_sums.min():.3g}: the diagonal is smaller than the "
            "weights' sum (L = D - W needs D = the row sums of W)"
        )
    raise ValueError(
        f"{name} is not positive semi-definite (a direction with x'Lx/x'x = {lam:.3g}, "
        f"largest entry {scale:.3g}); {cause}. The intrinsic term f'Lf would reward "
        "disagreement; build L with semiscale.graph.laplacian(W)"
    )


def check_laplacian(
    laplacian,
    n_samples: int,
    *,
    name: str = "laplacian",
    rtol: float = 1e-8,
    check_psd: bool = True,
):
    """Validate a graph Laplacian given by the user: square n×n, finite, symmetric, and
    (``check_psd``) a Laplacian rather than a weight matrix, positive semi-definite.

    Unnormalized, normalized and iterated (``power``) Laplacians with or without a ridge pass;
    ``W`` instead of ``L``, ``W - D``, negative weights and a too-small diagonal are refused
    with the likely cause (see :func:`_check_laplacian_signs`).

    Returns a CSR matrix of float64 (a dense input is converted).
    """
    if laplacian is None:
        raise ValueError(f"{name} is None")
    L = sp.csr_matrix(laplacian, dtype=np.float64) if not sp.issparse(laplacian) else laplacian
    L = L.tocsr().astype(np.float64, copy=False)
    if L.shape != (n_samples, n_samples):
        raise ValueError(
            f"{name} has shape {L.shape} but X has {n_samples} samples; it must be "
            f"({n_samples}, {n_samples}), built on the same points in the same order"
        )
    if not np.isfinite(L.data).all():
        raise ValueError(f"{name} contains NaN or infinite entries")
    asym = abs(L - L.T)
    scale = abs(L).max() if L.nnz else 0.0
    if asym.nnz and asym.max() > rtol * max(scale, 1.0):
        raise ValueError(f"{name} is not symmetric (max |L - L.T| = {asym.max():.3g})")
    if check_psd:
        _check_laplacian_signs(L, name)
    return L
