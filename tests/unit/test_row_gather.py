"""merge_ids' gather (backends/row_gather.py): the gradient of gather_rows is autograd's gradient of
index_select bit for bit, whichever path computes it (index_add_ below the size threshold, embedding_bag
over stably sorted positions above it), for the gradients a program hands it: dense, broadcast scalars and
rows, transposed."""

import pytest
import torch

from paddle_compat.backends import row_gather


def test_bag_path_is_checked_and_in_use():
    assert row_gather._bags_agree()


@pytest.mark.parametrize("rows,width", [(40000, 64), (40000, 16), (30000, 10), (20000, 1), (4096, 16), (3, 5)])
def test_gradient_bits_equal_index_select(rows, width):
    gen = torch.Generator().manual_seed(rows + width)
    n = 2 * rows
    index = torch.randint(0, rows, (n,), generator=gen)
    index[:rows // 2] = torch.randperm(rows, generator=gen)[:rows // 2]
    index[-7:] = 0                       # a row many entries add into, in order
    grads = [torch.randn(n, width, generator=gen) * 1e3 ** torch.randn(n, width, generator=gen),
             torch.ones(()).expand(n, width), torch.randn(1, width, generator=gen).expand(n, width),
             torch.randn(width, n, generator=gen).t()]
    grads[0][torch.rand(n, width, generator=gen) < 0.05] = -0.0
    for g in grads:
        a = torch.randn(rows, width, requires_grad=True)
        b = a.detach().clone().requires_grad_(True)
        ya, yb = a.index_select(0, index), row_gather.gather_rows(b, index)
        assert torch.equal(ya, yb)
        ga, = torch.autograd.grad(ya, [a], g)
        gb, = torch.autograd.grad(yb, [b], g)
        assert torch.equal(ga.view(torch.int32), gb.view(torch.int32))


def test_no_grad_is_index_select():
    v = torch.randn(5, 3)
    i = torch.tensor([4, 0, 4])
    assert torch.equal(row_gather.gather_rows(v, i), v[i])
    assert not row_gather.gather_rows(v, i).requires_grad
