"""The language-model loss without the [N, V] logits (ember's model/linear_cross_entropy.h):
mean_i CE(s h_i W^T, y_i) over chunks of rows, each chunk's gradient folded into dL/dh and dL/dW as it is
formed, so at most one chunk of logits exists at a time. Under autocast the matmuls run in its dtype,
softmax and log-sum-exp in fp32. Targets equal to ignore_index (-100 by default) count for nothing, as in
F.cross_entropy."""
import torch


def linear_cross_entropy(hidden, weight, targets, scale=1.0, chunk_rows=0, ignore_index=-100):
    """hidden [N, D] (or [..., D]), weight [V, D], targets [N] (or [...]) int64 in [0, V) or ignore_index -> the
    mean loss over the targets that are not ignore_index, F.cross_entropy(scale * hidden @ weight.T, targets,
    ignore_index=ignore_index) (0, with zero gradients, when all are; IndexError for any other target
    outside [0, V)). chunk_rows 0: the device's budget (256 MiB of fp32 logits on a CPU, 4 GiB on a GPU).
    Without a gradient to form (torch.no_grad, or neither operand requires one) only the loss is computed:
    no [N, D] or [V, D] gradient buffer."""
    args = (hidden.reshape(-1, hidden.shape[-1]), weight, targets.reshape(-1), float(scale), int(chunk_rows),
            int(ignore_index))
    if not (torch.is_grad_enabled() and (hidden.requires_grad or weight.requires_grad)):
        return torch.ops.ember.linear_cross_entropy_loss(*args)
    loss, _, _ = torch.ops.ember.linear_cross_entropy(*args)
    return loss


class LinearCrossEntropy(torch.nn.Module):
    """A head with its own weight [V, D] whose forward returns the loss, never the logits."""

    def __init__(self, dim, vocab_size, scale=1.0, chunk_rows=0, ignore_index=-100):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.randn(vocab_size, dim) * 0.02)
        self.scale, self.chunk_rows, self.ignore_index = scale, chunk_rows, ignore_index

    def forward(self, hidden, targets):
        return linear_cross_entropy(hidden, self.weight, targets, self.scale, self.chunk_rows, self.ignore_index)
