# The fused RMSNorm with its residual add (model/norm.h: one pass each way, the add of the block's
# mixer output folded into the MLP norm's pass, its normed output written in bf16 under autocast)
# against ATen's add and rms_norm (kernels.norm = aten) over 50 training steps, fp32 and bf16
# autocast: the loss curves agree to 1e-2 at every logged step, and the switch really changes the
# path (fewer ops fused). lib_fusion.sh.
source "$(dirname "$0")/lib_common.sh"
source "$(dirname "$0")/lib_fusion.sh"
fusion_ab norm
echo "fused_norm: ok"
