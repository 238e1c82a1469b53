// Precompiled header of the library, the CLI and the benchmarks: what nearly every TU includes.
// Kept to ATen and torch::nn::Module: <torch/torch.h> here made every TU generate code for all of
// torch's C++ frontend (a 755 MB PCH; src/data/shard.cpp took 9.6 s with it, 5.4 s with this one;
// docs/building.md). The unit tests, which use the frontend, have their own (tests/unit/test_pch.h).
#pragma once
#include <ATen/ATen.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <torch/nn/module.h>
