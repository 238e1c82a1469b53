// The distributed layer (dist/): the launcher's environment, the c10d communicator (Gloo, ranks as
// threads over an in-process store) and the bucketed gradient reducer against a float64 reference.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <atomic>
#include <map>
#include <thread>

#include "ember/distributed/communicator.h"
#include "ember/distributed/stop_vote.h"
#include "ember/distributed/environment.h"
#include "ember/distributed/grad_reducer.h"
#include "ember/distributed/zero_shards.h"
#include "ember/util/cpus.h"
#include "ember/util/error.h"

using ember::Communicator;
using ember::DistEnv;

namespace {

ember::EnvLookup env_of(std::map<std::string, std::string> vars) {
  return [vars](const std::string& k) -> std::optional<std::string> {
    auto it = vars.find(k);
    return it == vars.end() ? std::nullopt : std::optional<std::string>(it->second);
  };
}

std::string env_error(std::map<std::string, std::string> vars) {
  try {
    ember::read_dist_env(env_of(std::move(vars)));
  } catch (const ember::ConfigError& e) {
    return e.what();
  }
  return "";
}

// Runs fn(rank, communicator) on `world` threads joined into one Gloo group.
void on_ranks(int world, const std::function<void(int, Communicator&)>& fn, int timeout_s = 30) {
  ember::InProcessStore store;
  std::vector<std::thread> threads;
  std::vector<std::string> errors(world);
  for (int r = 0; r < world; ++r)
    threads.emplace_back([&, r] {
      try {
        auto comm = Communicator::in_process(store, r, world, std::chrono::seconds(timeout_s));
        fn(r, *comm);
      } catch (const std::exception& e) {
        errors[r] = e.what();
      }
    });
  for (auto& t : threads) t.join();
  for (int r = 0; r < world; ++r) EXPECT_EQ(errors[r], "") << "rank " << r;
}

}  // namespace

TEST(DistEnvironment, TorchrunVariablesGiveRankWorldAndMaster) {
  auto d = ember::read_dist_env(env_of({{"RANK", "3"},
                                        {"WORLD_SIZE", "8"},
                                        {"LOCAL_RANK", "1"},
                                        {"LOCAL_WORLD_SIZE", "2"},
                                        {"MASTER_ADDR", "node7"},
                                        {"MASTER_PORT", "29400"}}));
  EXPECT_EQ(d.rank, 3);
  EXPECT_EQ(d.world, 8);
  EXPECT_EQ(d.local_rank, 1);
  EXPECT_EQ(d.local_world, 2);
  EXPECT_EQ(d.master_addr, "node7");
  EXPECT_EQ(d.master_port, 29400);
  EXPECT_EQ(d.source, "torchrun");
  EXPECT_FALSE(ember::read_dist_env(env_of({})).distributed());
}

TEST(DistEnvironment, MissingOrInconsistentVariablesAreNamed) {
  auto msg = env_error({{"RANK", "0"}, {"WORLD_SIZE", "2"}});
  EXPECT_NE(msg.find("MASTER_ADDR, MASTER_PORT"), std::string::npos) << msg;
  msg = env_error({{"RANK", "2"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "a"}, {"MASTER_PORT", "1"}});
  EXPECT_NE(msg.find("rank 2 outside [0, 2)"), std::string::npos) << msg;
  msg = env_error({{"RANK", "x"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "a"}, {"MASTER_PORT", "1"}});
  EXPECT_NE(msg.find("RANK='x'"), std::string::npos) << msg;
  msg = env_error({{"SLURM_PROCID", "1"}, {"SLURM_NTASKS", "4"}, {"SLURM_LOCALID", "1"}});
  EXPECT_NE(msg.find("SLURM_JOB_NODELIST, SLURM_JOB_ID"), std::string::npos) << msg;
}

TEST(DistEnvironment, SlurmVariablesGiveTheFirstHostAndAPortFromTheJob) {
  auto d = ember::read_dist_env(env_of({{"SLURM_PROCID", "5"},
                                        {"SLURM_NTASKS", "8"},
                                        {"SLURM_LOCALID", "1"},
                                        {"SLURM_NTASKS_PER_NODE", "4(x2)"},
                                        {"SLURM_JOB_NODELIST", "gpu[012-013]"},
                                        {"SLURM_JOB_ID", "123456"}}));
  EXPECT_EQ(d.rank, 5);
  EXPECT_EQ(d.world, 8);
  EXPECT_EQ(d.local_rank, 1);
  EXPECT_EQ(d.local_world, 4);
  EXPECT_EQ(d.master_addr, "gpu012");
  EXPECT_EQ(d.master_port, 20000 + 123456 % 10000);
  EXPECT_EQ(d.source, "slurm");
  // A one-task Slurm step is one process, not a job to join.
  EXPECT_FALSE(ember::read_dist_env(env_of({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "1"}})).distributed());
}

// 7 tasks on 4 nodes ("2(x3),1"), an srun step on part of the allocation (its own node list).
TEST(DistEnvironment, SlurmUnevenNodesAndStepsOnPartOfTheAllocation) {
  std::map<std::string, std::string> v = {{"SLURM_PROCID", "6"},
                                          {"SLURM_NTASKS", "7"},
                                          {"SLURM_LOCALID", "0"},
                                          {"SLURM_NODEID", "3"},
                                          {"SLURM_TASKS_PER_NODE", "2(x3),1"},
                                          {"SLURM_JOB_NODELIST", "n[1-4]"},
                                          {"SLURM_JOB_ID", "7"}};
  EXPECT_EQ(ember::read_dist_env(env_of(v)).local_world, 1);
  v["SLURM_PROCID"] = "5", v["SLURM_LOCALID"] = "1", v["SLURM_NODEID"] = "2";
  EXPECT_EQ(ember::read_dist_env(env_of(v)).local_world, 2);
  v["SLURM_STEP_TASKS_PER_NODE"] = "3,3";  // srun -n 6 on two of the four nodes
  v["SLURM_STEP_NUM_TASKS"] = "6", v["SLURM_STEP_NODELIST"] = "n[3-4]", v["SLURM_NODEID"] = "1";
  auto d = ember::read_dist_env(env_of(v));
  EXPECT_EQ(d.world, 6);
  EXPECT_EQ(d.local_world, 3);
  EXPECT_EQ(d.master_addr, "n3");
  v["SLURM_STEP_TASKS_PER_NODE"] = "3(x";
  EXPECT_NE(env_error(v).find("SLURM_STEP_TASKS_PER_NODE='3(x'"), std::string::npos) << env_error(v);
  v["SLURM_STEP_TASKS_PER_NODE"] = "3";
  EXPECT_NE(env_error(v).find("SLURM_NODEID=1 but SLURM_STEP_TASKS_PER_NODE='3' lists 1 nodes"), std::string::npos);
  v.erase("SLURM_STEP_TASKS_PER_NODE"), v.erase("SLURM_TASKS_PER_NODE"), v.erase("SLURM_NODEID");
  v["SLURM_NTASKS_PER_NODE"] = "abc";
  EXPECT_NE(env_error(v).find("SLURM_NTASKS_PER_NODE='abc'"), std::string::npos) << env_error(v);
  auto t = std::map<std::string, std::string>{
      {"RANK", " 1"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "a"}, {"MASTER_PORT", "1"}};
  EXPECT_NE(env_error(t).find("RANK=' 1'"), std::string::npos);
}

TEST(DistEnvironment, FirstSlurmHostOfAHostlist) {
  EXPECT_EQ(ember::first_slurm_host("node1"), "node1");
  EXPECT_EQ(ember::first_slurm_host("node1,node2"), "node1");
  EXPECT_EQ(ember::first_slurm_host("gpu[003-005,9],cpu1"), "gpu003");
  EXPECT_EQ(ember::first_slurm_host("gpu[7]"), "gpu7");
  EXPECT_EQ(ember::first_slurm_host("a1,gpu[1-2]"), "a1");
}

TEST(DistCommunicator, AllReduceBroadcastAndAgreementOverGloo) {
  on_ranks(3, [](int rank, Communicator& comm) {
    auto t = at::full({4}, static_cast<float>(rank + 1));
    comm.all_reduce_sum(t);
    EXPECT_TRUE(at::equal(t, at::full({4}, 6.0f)));
    auto b = at::full({2}, static_cast<double>(rank));
    comm.broadcast({b}, 2);
    EXPECT_TRUE(at::equal(b, at::full({2}, 2.0, at::kDouble)));
    EXPECT_TRUE(comm.any(rank == 1));
    EXPECT_FALSE(comm.any(false));
    EXPECT_DOUBLE_EQ(comm.sum(0.5 * rank), 1.5);
    comm.barrier();
  });
}

// The failure tests' ranks beat every 200 ms (a job's every 1 s): a rank is silent after 0.7 s.
constexpr std::chrono::milliseconds kBeat(200);

TEST(DistCommunicator, ACollectiveAPeerNeverJoinsFailsWithinTheTimeoutNamingTheRank) {
  ember::InProcessStore store;
  std::string error;
  std::atomic<bool> done{false};
  std::thread r1([&] {  // joins the group, then never takes part in the collective
    auto comm = Communicator::in_process(store, 1, 2, std::chrono::seconds(2), kBeat);
    // Alive (beating) until rank 0 has its answer, or 8 s, whichever comes first.
    const auto joined = std::chrono::steady_clock::now();
    while (!done && std::chrono::steady_clock::now() - joined < std::chrono::seconds(8))
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
  });
  const auto t0 = std::chrono::steady_clock::now();
  try {
    auto comm = Communicator::in_process(store, 0, 2, std::chrono::seconds(2), kBeat);
    comm->all_reduce_sum(at::ones({3}));
  } catch (const ember::Error& e) {
    error = e.what();
  }
  const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  done = true;
  r1.join();
  EXPECT_NE(error.find("all-reduce failed on rank 0: a peer rank exited or stalled"), std::string::npos) << error;
  EXPECT_NE(error.find("(timeout 2 s)"), std::string::npos) << error;
  // The 2 s timeout, then until rank 1 beats (at most 3.5 beat periods): not the 3.5 s of a job.
  EXPECT_LT(waited, 2.0 + 3.5 * 0.2 + 1.0);
}

TEST(DistCommunicator, ARankThatLeftIsNamedByTheSurvivors) {
  ember::InProcessStore store;
  std::string error;
  std::atomic<bool> joined{false};
  std::thread r1([&] {  // joins, then goes away: its connections close and its heartbeat stops
    auto comm = Communicator::in_process(store, 1, 2, std::chrono::seconds(5), kBeat);
    joined = true;
  });
  try {
    auto comm = Communicator::in_process(store, 0, 2, std::chrono::seconds(5), kBeat);
    while (!joined) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    r1.join();
    comm->all_reduce_sum(at::ones({3}));
  } catch (const ember::Error& e) {
    error = e.what();
  }
  if (r1.joinable()) r1.join();
  EXPECT_NE(error.find("all-reduce failed on rank 0: rank 1 stopped beating"), std::string::npos) << error;
}

namespace {

// A small model with a parameter only some ranks use and one nobody uses.
struct Net {
  at::Tensor w1, b1, w2, side, unused;
  explicit Net(uint64_t seed) {
    auto g = at::make_generator<at::CPUGeneratorImpl>(seed);
    w1 = at::randn({16, 8}, g).requires_grad_();
    b1 = at::randn({16}, g).requires_grad_();
    w2 = at::randn({4, 16}, g).requires_grad_();
    side = at::randn({4}, g).requires_grad_();
    unused = at::randn({3}, g).requires_grad_();
  }
  std::vector<at::Tensor> params() const { return {w1, b1, w2, side, unused}; }
  at::Tensor loss(const at::Tensor& x, bool use_side) const {
    auto y = at::linear(at::tanh(at::linear(x, w1, b1)), w2);
    if (use_side) y = y + side;
    return (y * y).mean();
  }
};

at::Tensor batch_of(int rank, int micro) {
  auto g = at::make_generator<at::CPUGeneratorImpl>(100 + 10 * rank + micro);
  return at::randn({5, 8}, g);
}

}  // namespace

// Gradients after finish() equal the mean over ranks of each rank's accumulated gradients, computed
// in float64 one rank at a time; several buckets, two micro-steps, a parameter one rank skips.
void check_reducer(bool bf16, int64_t bucket_bytes) {
  const int world = 3, micro_steps = 2;
  std::vector<at::Tensor> expected(5);
  for (int r = 0; r < world; ++r) {
    Net ref(7);
    for (auto& p : ref.params()) p.set_data(p.detach().to(at::kDouble));
    for (int m = 0; m < micro_steps; ++m) ref.loss(batch_of(r, m).to(at::kDouble), r != 1).backward();
    for (int k = 0; k < 4; ++k) {
      auto g = ref.params()[k].grad();
      g = g.defined() ? g : at::zeros_like(ref.params()[k]);
      expected[k] = expected[k].defined() ? expected[k] + g / world : g / world;
    }
  }
  std::vector<std::vector<at::Tensor>> got(world);
  std::vector<ember::ReducerStats> stats(world);
  on_ranks(world, [&](int rank, Communicator& comm) {
    Net net(7);
    ember::GradReducer reducer(net.params(), comm, bucket_bytes, bf16);
    for (int m = 0; m < micro_steps; ++m) {
      reducer.begin_micro_step(m == micro_steps - 1);
      net.loss(batch_of(rank, m), rank != 1).backward();
    }
    reducer.finish();
    got[rank] = net.params();
    stats[rank] = reducer.stats();
  });
  const double tol = bf16 ? 2e-2 : 1e-5;
  for (int r = 0; r < world; ++r) {
    EXPECT_EQ(stats[r].buckets, bucket_bytes < 200 ? 2 : 1);  // [unused, side, w2], [b1, w1]
    for (int k = 0; k < 4; ++k)
      EXPECT_TRUE(at::allclose(got[r][k].grad().to(at::kDouble), expected[k], tol, tol)) << "rank " << r << " p" << k;
    EXPECT_FALSE(got[r][4].grad().defined()) << "a parameter no rank used keeps no gradient";
  }
}

TEST(DistGradReducer, MeanOfTheRanksAccumulatedGradientsInSeveralBuckets) { check_reducer(false, 100); }
TEST(DistGradReducer, OneBucketAndBf16Communication) { check_reducer(true, 1 << 20); }

TEST(DistGradReducer, FullBucketsLaunchDuringBackwardInOrder) {
  on_ranks(2, [](int rank, Communicator& comm) {
    Net net(3);
    ember::GradReducer reducer({net.w1, net.b1, net.w2, net.side}, comm, 100, false);  // [side, w2], [b1, w1]
    for (int step = 0; step < 2; ++step) {
      reducer.begin_micro_step(true);
      net.loss(batch_of(rank, step), true).backward();
      EXPECT_EQ(reducer.stats().launched_in_backward, 2) << "both buckets go out before backward returns";
      reducer.finish();
    }
    EXPECT_EQ(reducer.stats().buckets, 2);
  });
}

TEST(DistZero, OwnersAreBalancedInRegistrationOrder) {
  EXPECT_EQ(ember::assign_owners({10, 1, 1, 1, 8}, 2), (std::vector<int>{0, 1, 1, 1, 1}));
  EXPECT_EQ(ember::assign_owners({4, 4, 4}, 3), (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(ember::assign_owners({5, 5}, 4), (std::vector<int>{0, 1}));  // ranks may own nothing
}

TEST(DistZero, EveryRankEndsWithTheOwnersParameters) {
  const std::vector<int> owners{2, 0, 0, 1};
  std::vector<std::vector<at::Tensor>> got(3);
  on_ranks(3, [&](int rank, Communicator& comm) {
    std::vector<at::Tensor> params;
    for (int k = 0; k < 4; ++k) params.push_back(at::full({k + 1, 2}, 10.0f * rank + k).requires_grad_());
    ember::OwnedParameterSync sync(params, owners, comm);
    sync.sync();
    got[rank] = params;
  });
  for (int r = 0; r < 3; ++r)
    for (int k = 0; k < 4; ++k)
      EXPECT_TRUE(at::equal(got[r][k], at::full({k + 1, 2}, 10.0f * owners[k] + k))) << "rank " << r << " p" << k;
}

// Ranks share the CPUs the job gave them (Slurm's --cpus-per-task, taskset), not the machine's.
TEST(DistEnvironment, UsableCpusFollowTheAffinityMask) {
  cpu_set_t saved, one;
  ASSERT_EQ(sched_getaffinity(0, sizeof saved, &saved), 0);
  EXPECT_EQ(ember::usable_cpus(), CPU_COUNT(&saved));
  int first = 0;
  while (!CPU_ISSET(first, &saved)) ++first;
  CPU_ZERO(&one);
  CPU_SET(first, &one);
  ASSERT_EQ(sched_setaffinity(0, sizeof one, &one), 0);
  EXPECT_EQ(ember::usable_cpus(), 1);
  ASSERT_EQ(sched_setaffinity(0, sizeof saved, &saved), 0);
}

// A stop asked for by one rank at step 3 is seen by every rank at step 3 + lag, not before; the
// votes still in flight at the end are read by drain(); one process decides at once.
TEST(StopVote, EveryRankStopsAtTheSameStepLagStepsAfterTheAsk) {
  constexpr int kWorld = 3;
  constexpr int64_t kLag = 2;
  std::vector<std::vector<bool>> seen(kWorld);
  std::vector<bool> drained(kWorld);
  on_ranks(kWorld, [&](int rank, Communicator& comm) {
    ember::StopVote vote(&comm, kLag);
    for (int64_t step = 1; step <= 8; ++step) seen[rank].push_back(vote.cast(rank == 1 && step == 3));
    ember::StopVote late(&comm, kLag);
    for (int64_t step = 1; step <= 3; ++step) late.cast(rank == 2 && step == 2);  // still pending at the end
    drained[rank] = late.drain();
  });
  for (int r = 0; r < kWorld; ++r) {
    for (int64_t step = 1; step <= 8; ++step)
      EXPECT_EQ(seen[r][step - 1], step == 3 + kLag) << "rank " << r << " step " << step;
    EXPECT_TRUE(drained[r]) << "rank " << r;
  }
  ember::StopVote alone(nullptr, kLag);
  EXPECT_FALSE(alone.cast(false));
  EXPECT_TRUE(alone.cast(true));
}
