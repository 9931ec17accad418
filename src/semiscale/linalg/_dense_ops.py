r"""The dense factorizations and solves of the array-operations layer (:class:`DenseAlgebra`).

:class:`~semiscale.linalg.ops.ArrayOps` inherits them: the jittered Cholesky factorization, LU,
the lower-triangle updates (SYRK, LAUUM), triangular, Cholesky, LU and least-squares solves and
the symmetric eigendecomposition, all on NumPy arrays through LAPACK/BLAS (SciPy's wrappers).
A backend overrides them on :class:`~semiscale.linalg.ops.ArrayOps`'s subclass as it does the
kernel products; this module only keeps ``ops.py`` to one concept per module.  The conventions
are the layer's (:mod:`semiscale.linalg.ops`): factors are lower triangular (``L Lᵀ = A``), and
"lower triangle only" results leave their upper triangle unspecified, as LAPACK does.
"""

from __future__ import annotations

import warnings

import numpy as np
import scipy.linalg as sla

from ._interruptible import call_interruptibly, potrf_inplace

__all__ = ["DenseAlgebra", "cholesky_failure"]


class DenseAlgebra:
    """The dense factorizations and solves of :class:`~semiscale.linalg.ops.ArrayOps`.

    A mixin without state: every method is a pure function of its arguments.  Use it through
    :class:`~semiscale.linalg.ops.ArrayOps` (:func:`~semiscale.linalg.ops.get_ops`), never on
    its own.
    """

    # ------------------------------------------------------------------ lower-triangle updates
    def syrk(self, C, A, alpha=1.0):
        r"""``C ← C + α A Aᵀ`` in place on the lower triangle (BLAS ``syrk``), for A (s, r).

        Half the flops of ``A @ A.T``.  ``C`` must be a Fortran-ordered float64 (s, s) array;
        its upper triangle is neither read nor written.  Returns ``C``.
        """
        if not (C.flags.f_contiguous and C.dtype == np.float64):
            raise ValueError("syrk updates C in place: C must be Fortran-ordered float64")
        if A.shape[1]:
            # Feature blocks come Fortran-ordered from the triangular solves: no copy here.
            A = np.asfortranarray(A, dtype=np.float64)
            sla.blas.dsyrk(alpha, A, beta=1.0, c=C, trans=0, lower=1, overwrite_c=1)
        return C

    def lauum(self, L):
        r"""``Lᵀ L`` for a lower-triangular ``L`` (LAPACK ``lauum``, ``s³/3`` flops).

        Returns a new Fortran array whose lower triangle holds ``LᵀL`` (its upper triangle
        holds ``L``'s, which a lower-triangle consumer never reads).
        """
        G, info = sla.lapack.dlauum(np.asfortranarray(L), lower=1)
        if info != 0:  # pragma: no cover - lauum fails only on invalid arguments
            raise np.linalg.LinAlgError(f"LAPACK dlauum failed (info={info})")
        return G

    # ------------------------------------------------------------------ factorizations
    def jittered_cholesky(
        self, A, *, initial_jitter=1e-12, max_tries=12, growth=10.0, min_pivot=None
    ):
        r"""Lower Cholesky factor of a symmetric PSD matrix, adding jitter until well posed.

        Tries ``A`` itself first, then ``A + ε I`` with
        ``ε = initial_jitter · mean(diag A) · growth^t`` for ``t = 0, 1, …``.  A factor is
        accepted when LAPACK succeeds *and* the smallest pivot is not lost in round-off,
        ``min_i L_ii² > min_pivot · mean(diag A)`` (default ``min_pivot = s·u``, ``u`` the unit
        round-off), so singular matrices such as duplicate Nyström centers are jittered instead
        of silently factored into garbage.

        Each attempt factors one Fortran-ordered copy in place with LAPACK ``potrf``, called with
        the GIL released and, in the main thread for large ``s``, in a worker thread
        (:mod:`semiscale.linalg._interruptible`): Ctrl-C is raised here at once, not when
        LAPACK returns.

        Parameters
        ----------
        A : ndarray of shape (s, s)
            Symmetric positive semi-definite (only its lower triangle is read by LAPACK).
        initial_jitter : float
            First relative jitter, multiplied by the mean diagonal.
        max_tries : int
            Number of jittered attempts after the unjittered one.
        growth : float
            Factor by which the jitter grows between attempts.
        min_pivot : float, optional
            Relative floor of the squared pivots (preconditioners ask for 1e-10: their ``T⁻¹``
            then amplifies round-off by at most ~1e5).

        Returns
        -------
        L : ndarray of shape (s, s)
            Lower triangular, ``L Lᵀ = A + jitter·I``.
        jitter : float
            Absolute jitter added to the diagonal (0.0 when none was needed).

        Raises
        ------
        numpy.linalg.LinAlgError
            When even the largest jitter fails (not PSD, or not finite).
        """
        A = np.asarray(A)
        if A.ndim != 2 or A.shape[0] != A.shape[1]:
            raise ValueError(f"K_ss must be a square matrix, got shape {A.shape}")
        s = A.shape[0]
        if s == 0:
            return A.copy(), 0.0
        if not np.all(np.isfinite(A)):
            raise np.linalg.LinAlgError("K_ss contains NaN or inf; cannot factorize it")
        mean_diag = float(np.mean(np.diag(A)))
        if not mean_diag > 0:
            mean_diag = 1.0
        floor = s * np.finfo(A.dtype).eps if min_pivot is None else max(float(min_pivot), 0.0)
        tiny = floor * mean_diag
        jitter = 0.0
        for t in range(max_tries + 1):
            # One Fortran-ordered working copy per attempt, factored in place by LAPACK (no
            # identity matrix, no second copy inside scipy).
            work = np.array(A, order="F")
            if jitter:
                work.flat[:: s + 1] += jitter
            try:
                # in a worker thread for large s, so that Ctrl-C is not held by LAPACK
                L = call_interruptibly(s, potrf_inplace, work)
            except np.linalg.LinAlgError:
                L = None
            if L is not None and np.min(np.diag(L)) ** 2 > tiny:
                return L, jitter
            jitter = initial_jitter * mean_diag * growth**t
        raise cholesky_failure(s, jitter, growth, mean_diag)

    def lu_factor(self, A, *, overwrite_a=False):
        """LU factorization with partial pivoting, ``P A = L U`` (for :meth:`lu_solve`).

        ``overwrite_a`` lets LAPACK factor a Fortran-ordered float64 ``A`` in place (no n × n
        copy; ``A`` is destroyed); other arrays are copied as without it.  In the main thread a
        large factorization runs in a worker thread (:func:`~semiscale.linalg._interruptible.
        call_interruptibly`): Ctrl-C is raised here at once, not when LAPACK returns.
        """
        return call_interruptibly(
            _order(A), sla.lu_factor, A, overwrite_a=overwrite_a, check_finite=False
        )

    # ------------------------------------------------------------------ solves
    def solve_triangular(self, L, B, *, lower=True, trans=False, overwrite_b=False, side="left"):
        """``op(L)⁻¹ B`` (``side="left"``) or ``B op(L)⁻¹`` (``"right"``), ``op(L) = L`` or ``Lᵀ``.

        BLAS ``trsm`` for a triangular ``L``; ``trans`` selects ``Lᵀ``.  The right-hand form
        (float64) turns the columns of an ``n × a`` block into Cholesky-factor columns in place
        (randomly pivoted Cholesky: ``F_new = G L⁻ᵀ``).
        """
        if side == "right":
            return sla.blas.dtrsm(
                1.0,
                L,
                B,
                side=1,
                lower=int(lower),
                trans_a=int(trans),
                overwrite_b=int(overwrite_b),
            )
        if side != "left":
            raise ValueError(f"side must be 'left' or 'right', got {side!r}")
        return sla.solve_triangular(
            L,
            B,
            lower=lower,
            trans="T" if trans else 0,
            overwrite_b=overwrite_b,
            check_finite=False,
        )

    def cho_solve(self, L, B):
        """``(L Lᵀ)⁻¹ B`` from a lower Cholesky factor (two triangular solves)."""
        return sla.cho_solve((L, True), B, check_finite=False)

    def lu_solve(self, factor, B):
        """``A⁻¹ B`` from :meth:`lu_factor`'s factorization of ``A``."""
        return sla.lu_solve(factor, B, check_finite=False)

    def solve(self, A, B, *, assume_a="gen", overwrite_a=False):
        """``A⁻¹ B`` for a dense square ``A``: LU (``"gen"``) or Cholesky (``"pos"``).

        Raises
        ------
        numpy.linalg.LinAlgError
            When ``A`` is singular (zero or non-positive pivot) or LAPACK's reciprocal
            condition estimate is below machine precision (scipy's ``LinAlgWarning``).
        """
        with warnings.catch_warnings():
            warnings.simplefilter("error", sla.LinAlgWarning)
            try:
                if assume_a == "gen":
                    return self._lu_solve(A, B, overwrite_a)
                return sla.solve(
                    A, B, assume_a=assume_a, check_finite=False, overwrite_a=overwrite_a
                )
            except sla.LinAlgWarning as w:
                raise np.linalg.LinAlgError(str(w)) from None

    def lu_factor_checked(self, A, *, overwrite_a=False):
        """:meth:`lu_factor`, refusing what :meth:`solve` refuses: a ``LinAlgError`` when LAPACK's
        reciprocal condition estimate (``gecon``) is below machine precision."""
        return self._lu_factor_checked(A, overwrite_a)

    @staticmethod
    def _lu_factor_checked(A, overwrite_a):
        A = np.asarray(A)
        anorm = np.linalg.norm(A, 1)
        lu, piv = call_interruptibly(
            _order(A), sla.lu_factor, A, overwrite_a=overwrite_a, check_finite=False
        )
        (gecon,) = sla.lapack.get_lapack_funcs(("gecon",), (lu,))
        rcond, _ = gecon(lu, anorm, norm="1")
        if not rcond >= np.finfo(lu.dtype).eps:
            raise np.linalg.LinAlgError(
                f"Ill-conditioned matrix (rcond={rcond:.6g}): result may not be accurate."
            )
        return lu, piv

    @classmethod
    def _lu_solve(cls, A, B, overwrite_a):
        # scipy.linalg.solve keeps the GIL through LAPACK's gesv (a 3,000² solve let another
        # thread run 2 of 7 times), which froze progress displays and delayed Ctrl-C for the
        # whole exact fit; lu_factor releases it.  The condition check is solve's: gecon.
        factor = cls._lu_factor_checked(A, overwrite_a)
        return sla.lu_solve(factor, B, check_finite=False)

    def eigh(self, A, *, n_top=None, overwrite_a=False):
        r"""The largest eigenpairs of a symmetric ``A``, eigenvalues in *decreasing* order.

        LAPACK's MRRR driver ``syevr`` (``scipy.linalg.eigh(driver="evr")``): with ``n_top``
        it computes only the top ``n_top`` pairs (``subset_by_index``), and its workspace is
        ``26 n`` floats and ``10 n`` integers, where the divide-and-conquer ``syevd`` needs
        ``2 n²`` more floats.  Only the lower triangle of ``A`` is read; a C-ordered ``A`` is
        handed to LAPACK as its transpose (the same symmetric matrix, Fortran-ordered), so
        ``overwrite_a=True`` really reuses ``A``'s buffer instead of copying it.

        Parameters
        ----------
        A : ndarray of shape (n, n)
            Symmetric, float64 or float32.
        n_top : int or None, default=None
            How many of the largest eigenpairs (None: all ``n``).
        overwrite_a : bool, default=False
            Let LAPACK destroy ``A``.

        Returns
        -------
        values : ndarray of shape (n_top,)
            Decreasing.
        vectors : ndarray of shape (n, n_top)
            Orthonormal columns (Fortran-ordered, as LAPACK writes them), ``vectors[:, i]`` for
            ``values[i]``.
        """
        A = np.asarray(A)
        n = A.shape[0]
        k = n if n_top is None else max(0, min(int(n_top), n))
        if k == 0:
            return np.empty(0, A.dtype), np.empty((n, 0), A.dtype)
        M = A.T if A.flags.c_contiguous and not A.flags.f_contiguous else A
        values, vectors = sla.eigh(
            M,
            lower=False,  # Aᵀ's upper triangle is A's lower one
            subset_by_index=None if k == n else (n - k, n - 1),
            driver="evr",
            overwrite_a=overwrite_a,
            check_finite=False,
        )
        # decreasing order, columns swapped in place: a reversed copy would be a second n × k
        for i in range(k // 2):
            vectors[:, [i, k - 1 - i]] = vectors[:, [k - 1 - i, i]]
        return values[::-1].copy(), vectors

    def lstsq(self, A, B):
        """Minimum-norm least-squares solution of ``A X = B`` (SVD-based LAPACK ``gelsd``)."""
        return sla.lstsq(A, B, check_finite=False)[0]


def cholesky_failure(s, jitter, growth, mean_diag):
    r"""The error of a jittered Cholesky factorization that failed at every jitter.

    One message for :meth:`DenseAlgebra.jittered_cholesky` and the backends' own versions of
    it (TorchOps): ``jitter`` is the schedule's next value, so the last one tried was
    ``jitter / growth`` (absolute, and relative to ``mean_diag``, the mean diagonal of the
    ``s × s`` matrix).

    Returns
    -------
    numpy.linalg.LinAlgError
        For the caller to raise.
    """
    return np.linalg.LinAlgError(
        f"Cholesky of the {s}x{s} matrix failed even with jitter {jitter / growth:.3g} "
        f"(= {jitter / growth / mean_diag:.3g} × mean diagonal); the matrix is not positive "
        "semi-definite: check the kernel (is it PSD?) or raise initial_jitter / max_tries"
    )


def _order(A):
    """The order of a square matrix (0 for anything else: no worker thread)."""
    shape = np.shape(A)
    return shape[0] if len(shape) == 2 and shape[0] == shape[1] else 0
