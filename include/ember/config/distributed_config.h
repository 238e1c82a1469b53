// distributed.* keys: the c10d data-parallel engine (dist/). The job's shape (rank, world, master)
// comes from the launcher's environment (dist/environment.h), not from here.
#pragma once
#include "ember/config/fields.h"

namespace ember {

enum class Backend { automatic, gloo, nccl };
inline std::span<const EnumName<Backend>> enum_names(Backend) {
  static constexpr EnumName<Backend> names[] = {
      {Backend::automatic, "auto"}, {Backend::gloo, "gloo"}, {Backend::nccl, "nccl"}};
  return names;
}

enum class GradComm { fp32, bf16 };
inline std::span<const EnumName<GradComm>> enum_names(GradComm) {
  static constexpr EnumName<GradComm> names[] = {{GradComm::fp32, "fp32"}, {GradComm::bf16, "bf16"}};
  return names;
}

struct DistributedConfig {
  Backend backend = Backend::automatic;  // auto: nccl when the ranks train on GPUs, else gloo
  int64_t timeout_s = 600;               // a collective or the rendezvous waiting longer fails
  int64_t heartbeat_timeout_s = 30;      // a peer silent (or the store unanswering) this long ends the rank
  std::string interface;                 // the interface ranks advertise ("": the one routing to the master)
  double bucket_mb = 25.0;               // gradient all-reduce bucket size
  GradComm grad_comm = GradComm::fp32;   // dtype gradients travel in
  int64_t zero = 0;                      // 1: AdamW state sharded across ranks (ZeRO-1)

  void fields(FieldVisitor& v) {
    v.choice("backend", backend);
    v.field("timeout_s", timeout_s, Bound::positive());
    v.field("heartbeat_timeout_s", heartbeat_timeout_s, Bound::positive());
    v.field("interface", interface);
    v.field("bucket_mb", bucket_mb, Bound::positive());
    v.choice("grad_comm", grad_comm);
    v.field("zero", zero, Bound::non_negative());
  }
  void check(const ConfigChecker& c) const {
    c.require(zero <= 1, "distributed.zero", "expected 0 (replicated optimizer state) or 1 (ZeRO-1, sharded)");
  }
  int64_t bucket_bytes() const { return static_cast<int64_t>(bucket_mb * 1024 * 1024); }
};

}  // namespace ember
