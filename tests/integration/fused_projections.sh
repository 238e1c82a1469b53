# The fused projections (q, k, v and the gate in one GEMM, gate and up in one: model/fused_projections.h)
# against one linear per weight (kernels.projections = aten) over 50 training steps of gated attention,
# fp32 and bf16 autocast: the loss curves agree to 1e-2 at every logged step, and the switch really
# changes the path (the profile of one step counts fewer ops fused). lib_fusion.sh.
source "$(dirname "$0")/lib_common.sh"
source "$(dirname "$0")/lib_fusion.sh"
fusion_ab projections --set model.mixer.kind=gated_attention
echo "fused_projections: ok"
