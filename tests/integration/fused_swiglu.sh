# The fused SwiGLU gate (one kernel each way: kernels/swiglu.h) against ATen's silu * up
# (kernels.swiglu = aten) over 50 training steps, fp32 and bf16 autocast, with the gate and up
# projections stacked (so backward takes the gate's one-buffer gradient): the loss curves agree to
# 1e-2 at every logged step, and the switch really changes the path (fewer ops fused). lib_fusion.sh.
source "$(dirname "$0")/lib_common.sh"
source "$(dirname "$0")/lib_fusion.sh"
fusion_ab swiglu --set kernels.projections=fused
echo "fused_swiglu: ok"
