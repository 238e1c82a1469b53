// The one device resolver (train/device_choice.h) behind train.device and every --device: cpu is
// the CPU, auto is CUDA exactly when a device is present, and cuda without one, a bad spelling or
// a rank beyond the node's GPUs is a ConfigError naming the key.
#include <gtest/gtest.h>
#include <torch/cuda.h>

#include "ember/train/device_choice.h"
#include "ember/util/error.h"
#include "test_helpers.h"

TEST(DeviceChoice, CpuAutoAndCudaResolveAsAskedOrNameTheKey) {
  using ember::DeviceChoice;
  using ember::testing::error_message;
  EXPECT_EQ(ember::resolve_device(DeviceChoice::cpu, "train.device"), at::Device(at::kCPU));
  EXPECT_EQ(ember::resolve_device("cpu", "--device"), at::Device(at::kCPU));
  const bool cuda = torch::cuda::is_available();
  EXPECT_EQ(ember::resolve_device(DeviceChoice::automatic, "train.device").is_cuda(), cuda);
  if (!cuda) {
    const auto message = error_message([] { ember::resolve_device(DeviceChoice::cuda, "train.device"); });
    EXPECT_NE(message.find("train.device: 'cuda' requested but no CUDA device"), std::string::npos) << message;
  } else {
    const int beyond = static_cast<int>(torch::cuda::device_count());
    const auto message = error_message([beyond] { ember::resolve_device(DeviceChoice::cuda, "train.device", beyond); });
    EXPECT_NE(message.find("local rank"), std::string::npos) << message;
  }
  const auto message = error_message([] { ember::resolve_device("gpu", "--device"); });
  EXPECT_NE(message.find("--device: expected auto, cpu or cuda, got 'gpu'"), std::string::npos) << message;
}
