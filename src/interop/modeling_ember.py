# Written by `ember export hf` beside config.json for models that LlamaForCausalLM cannot hold:
# per-layer MLP widths (ember's tapered stacks, config key `intermediate_sizes`) and gated
# attention (`attention_gate`: elementwise | headwise; Y'_h = Y_h * sigmoid(X W_theta)_h before
# o_proj). Everything else is Llama's own code. Load with
#   AutoModelForCausalLM.from_pretrained(DIR, trust_remote_code=True)
import copy

import torch
from torch import nn
from transformers import LlamaForCausalLM
from transformers.models.llama.modeling_llama import LlamaAttention, LlamaMLP


class GatedOutputProjection(nn.Linear):
    """o_proj that first multiplies each head's output by the gate its attention module set."""

    def __init__(self, in_features, out_features, num_heads):
        super().__init__(in_features, out_features, bias=False)
        self.num_heads = num_heads
        self.gate = None

    def forward(self, y):
        heads = y.view(*y.shape[:-1], self.num_heads, -1)
        gate = self.gate.view(*y.shape[:-1], self.num_heads, -1)
        return super().forward((heads * gate).reshape(y.shape))


class EmberGatedAttention(LlamaAttention):
    """Llama attention with ember's gate G = sigmoid(X W_theta) on each head's output (G1)."""

    def __init__(self, config, layer_idx):
        super().__init__(config, layer_idx)
        heads = config.num_attention_heads
        width = self.head_dim if config.attention_gate == "elementwise" else 1
        self.gate_proj = nn.Linear(config.hidden_size, heads * width, bias=False)
        self.o_proj = GatedOutputProjection(heads * self.head_dim, config.hidden_size, heads)

    def forward(self, hidden_states, *args, **kwargs):
        self.o_proj.gate = torch.sigmoid(self.gate_proj(hidden_states))
        try:
            return super().forward(hidden_states, *args, **kwargs)
        finally:
            self.o_proj.gate = None


def _mlp_of_width(config, width):
    narrowed = copy.copy(config)
    narrowed.intermediate_size = width
    return LlamaMLP(narrowed)


class EmberForCausalLM(LlamaForCausalLM):
    def __init__(self, config):
        super().__init__(config)
        widths = getattr(config, "intermediate_sizes", None)
        gate = getattr(config, "attention_gate", "none")
        if widths is not None and len(widths) != config.num_hidden_layers:
            raise ValueError(f"intermediate_sizes has {len(widths)} entries for {config.num_hidden_layers} layers")
        if gate not in ("none", "elementwise", "headwise"):
            raise ValueError(f"attention_gate '{gate}' is not one of none, elementwise, headwise")
        for i, layer in enumerate(self.model.layers):
            if widths is not None:
                layer.mlp = _mlp_of_width(config, widths[i])
            if gate != "none":
                layer.self_attn = EmberGatedAttention(config, i)
        self.post_init()
