# The fused SwiGLU gate (one kernel each way: model/swiglu_gate.h) against ATen's silu * up
# (EMBER_FUSED_SWIGLU=0) over 50 training steps, fp32 and bf16 autocast, with the gate and up
# projections stacked (so backward takes the gate's one-buffer gradient): the loss curves agree to
# 1e-2 at every logged step, and the switch really changes the path (fewer ops fused). lib_fusion.sh.
source "$(dirname "$0")/lib_common.sh"
source "$(dirname "$0")/lib_fusion.sh"
export EMBER_FUSED_PROJECTIONS=1
fusion_ab EMBER_FUSED_SWIGLU
echo "fused_swiglu: ok"
