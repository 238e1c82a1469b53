// Precompiled header: the heavy LibTorch includes, compiled once per target (see CMakeLists).
#pragma once
#include <ATen/ATen.h>
#include <fmt/format.h>
#include <torch/torch.h>
#include <nlohmann/json.hpp>
