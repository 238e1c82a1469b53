"""Autograd formulas and fake (shape-only) implementations of the operators whose kernels are ember's
own, so that autograd differentiates them and torch.compile traces them. The operators built from ATen
ops (titans_memory, cms_level, lev_spline_reference) need neither: autograd and the compiler see
through them."""
import torch

lib = torch.library


@lib.register_fake("ember::lev_spline")
def _lev_spline_fake(u, S, normalize=True):
    torch._check(u.dim() == 3 and S.dim() == 4, lambda: "ember.lev_spline: u [N, h, d_s] and S [h, d_s, kappa, r]")
    return u.new_empty((u.shape[0], u.shape[1], S.shape[3]))


@lib.register_fake("ember::lev_spline_backward")
def _lev_spline_backward_fake(grad, m, u, S, normalize):
    return torch.empty_like(u), torch.empty_like(S)


def _lev_spline_setup(ctx, inputs, output):
    u, S, normalize = inputs
    ctx.save_for_backward(u, S, output)
    ctx.normalize = normalize


def _lev_spline_backward(ctx, grad):
    u, S, m = ctx.saved_tensors
    grad_u, grad_S = torch.ops.ember.lev_spline_backward(grad, m, u, S, ctx.normalize)
    return grad_u, grad_S, None


lib.register_autograd("ember::lev_spline", _lev_spline_backward, setup_context=_lev_spline_setup)


def _loss_dtype(hidden, weight):
    """The dtype the operator accumulates in: float64 for float64 operands, else float32."""
    both_double = torch.promote_types(hidden.dtype, weight.dtype) == torch.float64
    return torch.float64 if both_double and not torch.is_autocast_enabled(hidden.device.type) else torch.float32


@lib.register_fake("ember::linear_cross_entropy")
def _linear_cross_entropy_fake(hidden, weight, targets, scale=1.0, chunk_rows=0, ignore_index=-100):
    return hidden.new_empty((), dtype=_loss_dtype(hidden, weight)), torch.empty_like(hidden), torch.empty_like(weight)


@lib.register_fake("ember::linear_cross_entropy_loss")
def _linear_cross_entropy_loss_fake(hidden, weight, targets, scale=1.0, chunk_rows=0, ignore_index=-100):
    return hidden.new_empty((), dtype=_loss_dtype(hidden, weight))


def _linear_cross_entropy_setup(ctx, inputs, output):
    _, grad_hidden, grad_weight = output
    ctx.save_for_backward(grad_hidden, grad_weight)


def _linear_cross_entropy_backward(ctx, grad_loss, _grad_of_grad_hidden, _grad_of_grad_weight):
    grad_hidden, grad_weight = ctx.saved_tensors  # d(mean loss)/dh and /dW; the chain rule scales them
    return (grad_loss.to(grad_hidden.dtype) * grad_hidden, grad_loss.to(grad_weight.dtype) * grad_weight,
            None, None, None, None)


lib.register_autograd("ember::linear_cross_entropy", _linear_cross_entropy_backward,
                      setup_context=_linear_cross_entropy_setup)
