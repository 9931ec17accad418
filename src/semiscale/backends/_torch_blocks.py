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
        self.torch = ops.torch
        self.kernel, self.dtype = kernel, np.dtype(dtype)
        self.symmetric = B is None
        laplacian = type(kernel) is LaplacianKernel
        # L1 distances are float64 whatever the result dtype, as SciPy's cdist computes them
        a_dtype = np.dtype(np.float64) if laplacian else self.dtype
        self.A, meta = ops._resident(A, a_dtype)
        self.n_rows = self.A.shape[0]
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
                self.shift = ops._to_device(shift, self.dtype)
            self.gamma = gamma = float(kernel.gamma)
            # NumPy's formula: −γ‖a − b‖² = [a, 1, −γ‖a‖²]·[2γb, −γ‖b‖², 1], one GEMM and then
            # exp.  A GEMM with the B terms as a broadcast bias and −γ‖a‖² subtracted after it
            # took 10.3 ms against 5.8 ms for a 2,000 × 1,000 float64 block (d = 10, one thread,
            # exp and the product by V included; python /tmp/w/HT/micro.py): two more passes.
            B_aug = np.empty((Bc.shape[0], Bc.shape[1] + 2), dtype=self.dtype)
            np.multiply(Bc, 2.0 * gamma, out=B_aug[:, :-2])
            B_aug[:, -2] = -gamma * _sq_norms(Bc)
            B_aug[:, -1] = 1.0
            self.B_t = ops._to_device(B_aug.T.copy(), self.dtype)
        else:
            self.B = ops._to_device(B_host, a_dtype)
            self.B_t = self.B.T
        self.n_cols = B_host.shape[0]

    def block(self, rows: slice):
        """``K(A[rows], B)`` as a device tensor of the computation's dtype."""
        torch, kernel = self.torch, self.kernel
        A_blk = self.A[rows]
        kind = type(kernel)
        if kind is RBF:
            A_aug = torch.empty(
                (A_blk.shape[0], A_blk.shape[1] + 2), dtype=A_blk.dtype, device=A_blk.device
            )
            A_aug[:, :-2] = A_blk if self.shift is None else A_blk - self.shift
            A_aug[:, -2] = 1.0
            A_aug[:, -1] = A_aug[:, :-2].square().sum(dim=1).mul_(-self.gamma)
            K = A_aug @ self.B_t
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
