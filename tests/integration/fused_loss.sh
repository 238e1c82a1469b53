# The fused loss head against its ATen pass (kernels.loss_head = aten) over 50 training steps, fp32 and
# bf16 autocast: the loss curves agree to 1e-2 at every logged step, and the switch really changes
# the path (the profile of one step counts fewer ops with the fused pass). lib_fusion.sh.
source "$(dirname "$0")/lib_common.sh"
source "$(dirname "$0")/lib_fusion.sh"
fusion_ab loss_head
echo "fused_loss: ok"
