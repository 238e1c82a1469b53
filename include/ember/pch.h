// Precompiled header: the heavy LibTorch includes, compiled once per target (see CMakeLists).
#pragma once
#include <torch/torch.h>
#include <ATen/ATen.h>
#include <nlohmann/json.hpp>
#include <fmt/format.h>
