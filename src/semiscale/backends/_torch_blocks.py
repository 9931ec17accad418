r"""Kernel blocks ``K(A[rows], B)`` of the built-in kernels as torch tensors on a device.

The formulas are those of :mod:`semiscale.kernels.fixed` and :mod:`semiscale._pairs`, step for
step, so that float64 blocks equal the NumPy ones to rounding (about 1e-15 relative):

- :class:`~semiscale.kernels.RBF`: :math:`\exp(2γ\,a·b − γ‖a‖^2 − γ‖b‖^2)` from one GEMM, the
  operands shifted first by ``B``'s column mean when the NumPy path shifts them
  (:data:`semiscale._pairs.SHIFT_RATIO`), the exponent set to exactly 0 on the diagonal of
  ``K(A, A)``;
- :class:`~semiscale.kernels.LaplacianKernel`: :math:`\exp(-γ‖a − b‖_1)` from float64 L1
  distances (as SciPy's ``cdist``), exact zeros on the diagonal of ``K(A, A)``;
- :class:`~semiscale.kernels.Linear` :math:`a·b` and :class:`~semiscale.kernels.Polynomial`
  :math:`(γ\,a·b + c_0)^d`.

Any other kernel (subclasses included: they may override a block's formula) has no device plan
and the caller falls back to NumPy.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from .._pairs import _cast, _check_input, _check_magnitude, _reference_shift, _sq_norms
from ..kernels.fixed import RBF, LaplacianKernel, Linear, Polynomial

__all__ = ["FUSED_KERNELS", "DevicePlan"]

#: The kernel classes with a device formula (exact types: a subclass falls back to NumPy).
FUSED_KERNELS = (RBF, LaplacianKernel, Linear, Polynomial)


def torch_dtype(torch, dtype):
    return torch.float32 if np.dtype(dtype) == np.float32 else torch.float64


class DevicePlan:
    """The B-side operands of ``K(A, B)`` on the device, and the blocks of its rows.

    Parameters
    ----------
    ops : TorchOps
        Gives ``torch``, the device and the resident copy of ``A`` (:meth:`TorchOps._resident`).
    kernel : Kernel
        One of :data:`FUSED_KERNELS`, parameters checked.
    A : ndarray of shape (n_a, d)
        Dense host array (validated when its device copy is made).
    B : ndarray of shape (n_b, d) or None
        Validated dense host array; None means ``A`` (exact zero self-distances).
    dtype : numpy dtype
        The computation's dtype (float32 or float64).
    """

    def __init__(self, ops, kernel, A, B, dtype):
        torch = self.torch = ops.torch
        self.kernel, self.dtype = kernel, np.dtype(dtype)
        self.symmetric = B is None
        laplacian = type(kernel) is LaplacianKernel
        # L1 distances are float64 whatever the result dtype, as SciPy's cdist computes them
        a_dtype = np.dtype(np.float64) if laplacian else self.dtype
        self.A, meta = ops._resident(A, a_dtype)
        self.n_rows = self.A.shape[0]
        tdtype = torch_dtype(torch, a_dtype)
        B_host = _check_input(A, "A") if self.symmetric else B
        self.shift = None
        if type(kernel) is RBF:
            if not meta.get("magnitude"):
                _check_magnitude(_check_input(A, "A"), A.shape[1], "A", underflow=False)
                meta["magnitude"] = True
            if not self.symmetric:
                _check_magnitude(B_host, B_host.shape[1], "B", underflow=False)
            pair = SimpleNamespace(A=A, B=B_host, dtype=self.dtype)
            shift = _reference_shift(pair)
            Bc = _cast(B_host, self.dtype)
            if shift is not None:
                Bc = Bc - shift
                self.shift = torch.as_tensor(shift, device=ops.device)
            gamma = float(kernel.gamma)
            self.gamma = gamma
            # exponent = A_blk (2γB)ᵀ − γ‖b‖² − γ‖a‖²: one GEMM with the B terms as its bias
            self.B_t = torch.as_tensor(np.multiply(Bc, 2.0 * gamma).T, device=ops.device)
            self.bias = torch.as_tensor(-gamma * _sq_norms(Bc), device=ops.device)
        else:
            host = np.ascontiguousarray(_cast(B_host, a_dtype))
            self.B = torch.as_tensor(host, device=ops.device, dtype=tdtype)
            self.B_t = self.B.T
        self.n_cols = B_host.shape[0]

    def block(self, rows: slice):
        """``K(A[rows], B)`` as a device tensor of the computation's dtype."""
        torch, kernel = self.torch, self.kernel
        A_blk = self.A[rows]
        kind = type(kernel)
        if kind is RBF:
            if self.shift is not None:
                A_blk = A_blk - self.shift
            K = torch.addmm(self.bias[None, :], A_blk, self.B_t)
            K.sub_((A_blk * A_blk).sum(dim=1, keepdim=True), alpha=self.gamma)
            self._zero_diagonal(K, rows)
            return K.exp_()
        if kind is LaplacianKernel:
            K = torch.cdist(A_blk, self.B, p=1)
            self._zero_diagonal(K, rows)
            K.mul_(-float(kernel.gamma)).exp_()
            return K.to(torch_dtype(torch, self.dtype))
        K = A_blk @ self.B_t
        if kind is Polynomial:
            K.mul_(float(kernel.gamma)).add_(float(kernel.coef0))
            K.pow_(int(kernel.degree))
        return K

    def _zero_diagonal(self, K, rows: slice):
        if self.symmetric:
            stop = min(rows.stop, self.n_cols)
            if stop > rows.start:
                i = self.torch.arange(rows.start, stop, device=K.device)
                K[i - rows.start, i] = 0.0
