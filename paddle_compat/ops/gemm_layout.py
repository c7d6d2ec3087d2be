"""The layout a 2-D weight enters a CPU matrix product in: Paddle's or torch.nn.Linear's.

Paddle keeps an fc weight as [in, out] row-major; torch.nn.Linear keeps [out, in] row-major and multiplies by
its transposed view, a column-major [in, out]. torch's autograd picks the weight-gradient product from the
weight's layout (mm_mat2_backward): row-major gives x^T @ dOut into [in, out], column-major gives
(dOut^T @ x)^T, a product into [out, in]. Same sums, but MKL (torch's CPU BLAS) is much slower on the first
when the output is narrow: with out = 10 and batch 256 x in 1024, x^T @ dOut takes ~560 us where dOut^T @ x
takes ~90 us, and the forward x @ W ~235 us where x @ (column-major W) takes ~120 us; from out = 12 on (and at
out = 1, a matrix-vector product) the two layouts cost about the same (measured on AVX-512, MKL 2024.2).

column_major(x, w) gives a narrow weight torch's layout for one product: a transposed copy, viewed back as
[in, out]. The copy and its way back in the backward (~2-9 us each for 10K elements) cost more than they save
on small products, so it applies only where x has at least _MIN_WORK elements (batch 32 x in 200: ~7 us lost;
batch 32 x in 512 and up: a gain). On a GPU (cuBLAS) and for other dtypes the weight stays as it is.

Only where the weight's gradient is taken: a forward alone keeps the call of Paddle's mul kernel (MKL's
row-major sgemm of X and W, what torch calls for a row-major W). The column-major product rounds differently in
the last bits (~1e-7 relative): within what the parity tests hold a training step's losses and gradients to,
but the CTR parity test ranks 6400 predictions of a test program (its AUC to 1e-9), and there it flips a tie.

The gradient keeps the weight's own layout: the first view below is undone in the backward by a reshape,
which copies the column-major gradient back to row-major [in, out], as the parameter and the optimizer expect.
"""

from ..ir.lazy import torch

_NARROW = range(2, 12)      # output widths where MKL's row-major product is the slow one
_MIN_WORK = 16384           # batch x in, below which the copies cost more than they save


def column_major(x, w):
    """w ([in, out], the right operand of x @ w, x 2-D) as a column-major [in, out] where that is the
    faster layout for this product and its gradient; else w itself."""
    k, n = w.shape
    if n not in _NARROW or x.shape[0] * k < _MIN_WORK or not x.is_cpu or \
            w.dtype not in (torch.float32, torch.float64) or not (w.requires_grad and torch.is_grad_enabled()):
        return w
    # reshape(-1).view(k, n): no copy forward; backward, reshaping the column-major gradient to one dim copies it
    # into row-major order (the second view's backward), so the weight's gradient comes out contiguous
    return w.reshape(-1).view(k, n).t().contiguous().t()
