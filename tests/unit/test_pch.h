// Precompiled header of the unit tests: LibTorch's whole C++ frontend and GoogleTest, which the
// tests use throughout (the library's own PCH, include/ember/pch.h, stays lighter).
#pragma once
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "ember/pch.h"
