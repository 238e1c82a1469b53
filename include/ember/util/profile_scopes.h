// Names of the profiler scopes (RECORD_USER_SCOPE) that group a part of a training step, so that
// `ember train --profile` (train/profile_summary.h) counts every op inside one as that part.
#pragma once

namespace ember {

inline constexpr const char* kLossHeadScope = "ember::loss_head";
inline constexpr const char* kOptimizerScope = "ember::optimizer";
inline constexpr const char* kCommunicationScope = "ember::communication";

}  // namespace ember
