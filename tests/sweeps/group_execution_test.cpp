// run_group end to end: real `infertune sweep-worker` processes on the fixture model with tiny workloads, and
// INFERTUNE_SWEEP_FAULT making chosen trials crash, hang, exit or run out of memory. Each failure must cost
// exactly its own trial, with the right status and a reason naming what happened, and no worker may outlive
// run_group.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <map>

#include "process_group_check.h"
#include "sanitizer_runtime.h"
#include "sweeps/plan/trial_plan.h"
#include "sweeps/run/fault_injection.h"
#include "sweeps/run/group_execution.h"
#include "sweeps/run/worker_process.h"
#include "sweeps/run/worker_protocol.h"
#include "sweeps/spec/spec_yaml.h"
#include "sweeps/store/metric_names.h"
#include "test_support.h"

namespace infertune {
namespace {

const std::string kModel = test::fixture_path("models/fixture-llama-f32.gguf").string();

// Five configurations of one group (one model load): pp 8 at five batch sizes (at most 8: larger ones would
// coincide with -b 8).
SweepPlan five_trial_plan(int n_trials = 5) {
  std::string batches;
  for (int i = 0; i < n_trials; ++i) batches += (i ? ", " : "") + std::to_string(i + 1);
  const std::string yaml =
      "models: [" + kModel + "]\nthreads: [1]\nbatch_size: [" + batches + "]\nworkloads:\n  - {pp: 8}\n";
  auto text = parse_spec_yaml(yaml, "test.yaml");
  EXPECT_TRUE(text) << text.error().message;
  auto spec = resolve_spec(*text);
  EXPECT_TRUE(spec) << spec.error().message;
  auto plan = plan_sweep(*spec, gguf_model_shapes());
  EXPECT_TRUE(plan) << plan.error().message;
  EXPECT_EQ(plan->groups.size(), 1u);
  EXPECT_EQ(plan->trials.size(), size_t(n_trials));
  for (const auto& t : plan->trials) EXPECT_FALSE(t.skipped()) << t.skip_reason;
  return *plan;
}

GroupLaunch launch_of(const SweepPlan& plan) {
  GroupLaunch l;
  l.executable = test::infertune_binary();
  l.model_path = kModel;
  l.group_key = plan.groups[0].key;
  for (const auto& t : plan.trials) l.trials.push_back(&t);
  l.settings.warmup = true;
  l.settings.min_reps = 1;
  l.settings.max_reps = 2;
  l.trial_timeout_s = 60;
  return l;
}

struct GroupRecord {
  std::vector<TrialOutcome> outcomes;
  std::vector<int> workers;
  size_t started = 0;
  Status status;
};

GroupRecord run(const GroupLaunch& launch, size_t stop_after = SIZE_MAX) {
  GroupRecord r;
  GroupCallbacks callbacks;
  callbacks.started = [&](const PlannedTrial&) { ++r.started; };
  callbacks.finished = [&](const TrialOutcome& o) {
    r.outcomes.push_back(o);
    return r.outcomes.size() < stop_after;
  };
  callbacks.worker_started = [&](int pid) { r.workers.push_back(pid); };
  r.status = run_group(launch, callbacks);
  // run_group reaped every worker and killed its group: nothing of them is left (a fake worker's own child,
  // killed with its group, may take a moment to die).
  for (int pid : r.workers) {
    EXPECT_EQ(waitpid(pid, nullptr, WNOHANG), -1) << "worker " << pid << " not reaped";
    bool gone = false;
    for (int i = 0; i < 200 && !gone; ++i) {
      gone = test::live_processes_in_group(pid) == 0;
      if (!gone) usleep(10'000);
    }
    EXPECT_TRUE(gone) << "worker group " << pid << " still alive";
  }
  return r;
}

void expect_ok(const TrialOutcome& o) {
  EXPECT_EQ(o.status, TrialStatus::ok) << o.reason;
  EXPECT_TRUE(o.reason.empty()) << o.reason;
  EXPECT_EQ(o.measurement.main_metric, metric::kPromptTokensPerSecond);
  size_t timed = 0, load = 0;
  for (const Sample& s : o.measurement.samples) {
    if (s.metric == metric::kPromptTokensPerSecond && !s.is_warmup) {
      ++timed;
      EXPECT_GT(s.value, 0);
    }
    if (s.metric == metric::kModelLoadMs) {
      ++load;
      EXPECT_GE(s.value, 0);
      EXPECT_FALSE(s.is_warmup);
    }
  }
  EXPECT_GE(timed, 1u);
  EXPECT_LE(timed, 2u);
  EXPECT_EQ(load, 1u) << "every trial carries its worker's model load time";
  EXPECT_FALSE(o.started_at.empty());
  EXPECT_GE(o.finished_at, o.started_at);
  EXPECT_GT(o.duration_s, 0);
}

void expect_contains(const std::string& text, const std::string& part) {
  EXPECT_NE(text.find(part), std::string::npos) << "'" << part << "' not in: " << text;
}

TEST(GroupExecution, OneWorkerRunsEveryTrialInOrder) {
  const SweepPlan plan = five_trial_plan();
  const GroupRecord r = run(launch_of(plan));
  ASSERT_TRUE(r.status) << r.status.error().message;
  ASSERT_EQ(r.outcomes.size(), 5u);
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(r.outcomes[i].trial, &plan.trials[i]);
    expect_ok(r.outcomes[i]);
  }
  EXPECT_EQ(r.started, 5u);
  EXPECT_EQ(r.workers.size(), 1u) << "the model is loaded once for the group";
}

TEST(GroupExecution, EachFaultCostsOnlyItsTrial) {
  INFERTUNE_SKIP_UNDER_SANITIZER("cannot start a worker under an address-space limit");
  const SweepPlan plan = five_trial_plan(8);
  GroupLaunch launch = launch_of(plan);
  launch.trial_timeout_s = 3;
  launch.memory_limit_bytes = uint64_t(3) << 29;  // 1.5 GiB: the oom fault may run
  // crash by hash prefix; the others by run-order index.
  launch.worker_environment = {std::string(kSweepFaultVariable) + "=crash:" + plan.trials[1].hash.substr(0, 8) +
                               ",hang@3,exit3@5,oom@6"};
  const GroupRecord r = run(launch);
  ASSERT_TRUE(r.status) << r.status.error().message;
  ASSERT_EQ(r.outcomes.size(), 8u);
  for (size_t i = 0; i < 8; ++i) EXPECT_EQ(r.outcomes[i].trial, &plan.trials[i]);
  for (size_t i : {0, 2, 4, 7}) {
    SCOPED_TRACE(i);
    expect_ok(r.outcomes[i]);
  }
  const TrialOutcome& crash = r.outcomes[1];
  EXPECT_EQ(crash.status, TrialStatus::failed);
  expect_contains(crash.reason, "worker killed by signal 11 (Segmentation fault)");
  expect_contains(crash.reason, "last stderr: ");
  expect_contains(crash.reason, "fault injection: crashing");

  const TrialOutcome& hang = r.outcomes[3];
  EXPECT_EQ(hang.status, TrialStatus::timeout);
  expect_contains(hang.reason, "timeout after 3 s");
  EXPECT_GE(hang.duration_s, 3);

  const TrialOutcome& exit3 = r.outcomes[5];
  EXPECT_EQ(exit3.status, TrialStatus::failed);
  expect_contains(exit3.reason, "worker exited with status 3");

  const TrialOutcome& oom = r.outcomes[6];
  EXPECT_EQ(oom.status, TrialStatus::oom);
  expect_contains(oom.reason, "out of memory");
  expect_contains(oom.reason, "1536 MiB");

  for (const TrialOutcome* failed : {&crash, &hang, &exit3, &oom}) {
    EXPECT_TRUE(failed->measurement.samples.empty());
    EXPECT_FALSE(failed->started_at.empty());
  }
  // One worker to start, and one more after each of the four faults.
  EXPECT_EQ(r.workers.size(), 5u);
}

TEST(GroupExecution, TheOomFaultIsRefusedWithoutAMemoryLimit) {
  const SweepPlan plan = five_trial_plan(3);
  GroupLaunch launch = launch_of(plan);
  launch.worker_environment = {std::string(kSweepFaultVariable) + "=oom@1"};
  const GroupRecord r = run(launch);
  ASSERT_EQ(r.outcomes.size(), 3u);
  expect_ok(r.outcomes[0]);
  EXPECT_EQ(r.outcomes[1].status, TrialStatus::failed);
  expect_contains(r.outcomes[1].reason, "RLIMIT_AS");
  expect_contains(r.outcomes[1].reason, "none");
  expect_ok(r.outcomes[2]);
  EXPECT_EQ(r.workers.size(), 1u) << "a refused fault is an ordinary trial error";
}

TEST(GroupExecution, AModelThatCannotLoadFailsTheGroupOnce) {
  const SweepPlan plan = five_trial_plan();
  GroupLaunch launch = launch_of(plan);
  launch.model_path = "/nonexistent/dir/model.gguf";
  const GroupRecord r = run(launch);
  ASSERT_TRUE(r.status) << r.status.error().message;
  ASSERT_EQ(r.outcomes.size(), 5u);
  for (const TrialOutcome& o : r.outcomes) {
    EXPECT_EQ(o.status, TrialStatus::failed);
    expect_contains(o.reason, "cannot load the model");
    expect_contains(o.reason, "/nonexistent/dir/model.gguf");
  }
  EXPECT_EQ(r.started, 0u);
  EXPECT_EQ(r.workers.size(), 1u) << "one load attempt, not one per trial";
}

TEST(GroupExecution, StoppingAfterTheFirstOutcomeRunsNoMore) {
  const SweepPlan plan = five_trial_plan();
  const GroupRecord r = run(launch_of(plan), /*stop_after=*/1);
  ASSERT_TRUE(r.status) << r.status.error().message;
  ASSERT_EQ(r.outcomes.size(), 1u);
  expect_ok(r.outcomes[0]);
  EXPECT_LE(r.started, 2u);  // the worker may have begun the second trial before it read end of file
  EXPECT_EQ(r.workers.size(), 1u);
}

TEST(GroupExecution, StoppingAfterAFailureStartsNoNewWorker) {
  const SweepPlan plan = five_trial_plan(3);
  GroupLaunch launch = launch_of(plan);
  launch.worker_environment = {std::string(kSweepFaultVariable) + "=crash@0"};
  const GroupRecord r = run(launch, /*stop_after=*/1);
  ASSERT_EQ(r.outcomes.size(), 1u);
  EXPECT_EQ(r.outcomes[0].status, TrialStatus::failed);
  EXPECT_EQ(r.workers.size(), 1u);
}

TEST(GroupExecution, AMissingExecutableIsAnError) {
  const SweepPlan plan = five_trial_plan(1);
  GroupLaunch launch = launch_of(plan);
  launch.executable = "/nonexistent/infertune";
  const GroupRecord r = run(launch);
  ASSERT_FALSE(r.status);
  expect_contains(r.status.error().message, "/nonexistent/infertune");
  EXPECT_TRUE(r.outcomes.empty());
}

TEST(GroupExecution, AWorkerWritingGarbageFailsItsTrialAndTheGroupGoesOn) {
  const SweepPlan plan = five_trial_plan(2);
  GroupLaunch launch = launch_of(plan);
  // A fake worker: loads, starts the trial it is given, then breaks the protocol.
  const auto dir = test::temp_dir();
  const std::string script = (dir / "fake-worker").string();
  {
    std::ofstream out(script);
    out << "#!/bin/sh\nread request\necho '{\"event\":\"loaded\",\"load_ms\":1}'\n"
           "hash=$(echo \"$request\" | grep -o '\"hash\":\"[0-9a-f]*\"' | head -1 | cut -d'\"' -f4)\n"
           "echo \"{\\\"event\\\":\\\"trial_started\\\",\\\"hash\\\":\\\"$hash\\\"}\"\n"
           "echo 'Segmentation fault (core dumped)'\nsleep 30\n";
  }
  ASSERT_EQ(chmod(script.c_str(), 0755), 0);
  launch.executable = script;
  const GroupRecord r = run(launch);
  ASSERT_TRUE(r.status) << r.status.error().message;
  ASSERT_EQ(r.outcomes.size(), 2u);
  for (const TrialOutcome& o : r.outcomes) {
    EXPECT_EQ(o.status, TrialStatus::failed);
    expect_contains(o.reason, "worker protocol error");
    expect_contains(o.reason, "Segmentation fault (core dumped)");
  }
  EXPECT_EQ(r.workers.size(), 2u);
}

TEST(GroupExecution, AWorkerThatNeverLoadsTimesTheGroupOutOnce) {
  const SweepPlan plan = five_trial_plan(2);
  GroupLaunch launch = launch_of(plan);
  const auto dir = test::temp_dir();
  const std::string script = (dir / "stuck-worker").string();
  {
    std::ofstream out(script);
    out << "#!/bin/sh\necho 'opening the model' >&2\nsleep 30\n";
  }
  ASSERT_EQ(chmod(script.c_str(), 0755), 0);
  launch.executable = script;
  launch.trial_timeout_s = 1;
  const GroupRecord r = run(launch);
  ASSERT_EQ(r.outcomes.size(), 2u);
  for (const TrialOutcome& o : r.outcomes) {
    EXPECT_EQ(o.status, TrialStatus::timeout);
    expect_contains(o.reason, "loading the model: timeout after 1 s");
    expect_contains(o.reason, "opening the model");
  }
  EXPECT_EQ(r.workers.size(), 1u);
}

TEST(SweepWorker, IsHiddenAndRejectsABadRequestWithALoadFailure) {
  const auto help = test::run_command(test::infertune_binary() + " --help");
  EXPECT_EQ(help.output.find("sweep-worker"), std::string::npos) << help.output;
  const auto r = test::run_command("echo 'not a request' | " + test::infertune_binary() + " sweep-worker");
  EXPECT_NE(r.exit_code, 0);
  expect_contains(r.output, "\"event\":\"load_failed\"");
  expect_contains(r.output, "not JSON");
}

}  // namespace
}  // namespace infertune

namespace infertune {
namespace {

WorkerProcess start_worker_on(const SweepPlan& plan, int repetitions = 0) {
  GroupLaunch l = launch_of(plan);
  if (repetitions > 0) l.settings.min_reps = l.settings.max_reps = repetitions;
  WorkerRequest request;
  request.model_path = l.model_path;
  request.group_key = l.group_key;
  for (const PlannedTrial* t : l.trials) request.trials.push_back(WorkerTrial{t->index, t->hash, t->config});
  request.settings = l.settings;
  auto worker = WorkerProcess::start(WorkerCommand{test::infertune_binary(), {"sweep-worker"}, {}, std::nullopt});
  EXPECT_TRUE(worker) << worker.error().message;
  const auto deadline = WorkerProcess::Clock::now() + std::chrono::seconds(30);
  EXPECT_TRUE(worker->write_input(encode_request(request) + "\n", deadline));
  return std::move(worker).value();
}

WorkerEvent next_event(WorkerProcess& worker) {
  const auto line = worker.next_line(WorkerProcess::Clock::now() + std::chrono::seconds(30));
  EXPECT_EQ(line.state, WorkerProcess::LineState::line);
  auto event = decode_event(line.text);
  EXPECT_TRUE(event) << event.error().message;
  return event ? *event : WorkerEvent{};
}

TEST(SweepWorker, WritesLoadedThenEachTrialThenGroupDone) {
  const SweepPlan plan = five_trial_plan(2);
  WorkerProcess worker = start_worker_on(plan);
  const WorkerEvent loaded = next_event(worker);
  ASSERT_EQ(loaded.kind, WorkerEventKind::loaded);
  EXPECT_GT(loaded.load_ms, 0);
  for (const PlannedTrial& t : plan.trials) {
    const WorkerEvent started = next_event(worker);
    EXPECT_EQ(started.kind, WorkerEventKind::trial_started);
    EXPECT_EQ(started.hash, t.hash);
    const WorkerEvent done = next_event(worker);
    ASSERT_EQ(done.kind, WorkerEventKind::trial_done) << done.reason;
    EXPECT_EQ(done.hash, t.hash);
    EXPECT_FALSE(done.measurement.samples.empty());
  }
  EXPECT_EQ(next_event(worker).kind, WorkerEventKind::group_done);
  const WorkerExit exit = worker.finish(std::chrono::seconds(10));
  EXPECT_TRUE(exit.exited);
  EXPECT_EQ(exit.exit_code, 0);
}

TEST(SweepWorker, StopsByItselfWhenItsInputCloses) {
  // Trials of many repetitions: the worker is certainly inside the second one when its input closes.
  const SweepPlan plan = five_trial_plan(5);
  WorkerProcess worker = start_worker_on(plan, /*repetitions=*/1000);
  ASSERT_EQ(next_event(worker).kind, WorkerEventKind::loaded);
  ASSERT_EQ(next_event(worker).kind, WorkerEventKind::trial_started);
  ASSERT_EQ(next_event(worker).kind, WorkerEventKind::trial_done);
  worker.close_input();
  // What it writes after that: at most the start of the trial it then cut short, never another result.
  for (auto line = worker.next_line(WorkerProcess::Clock::now() + std::chrono::seconds(20));
       line.state == WorkerProcess::LineState::line;
       line = worker.next_line(WorkerProcess::Clock::now() + std::chrono::seconds(20))) {
    auto event = decode_event(line.text);
    ASSERT_TRUE(event) << event.error().message;
    EXPECT_EQ(event->kind, WorkerEventKind::trial_started) << line.text;
  }
  const WorkerExit exit = worker.finish(std::chrono::seconds(20));
  EXPECT_FALSE(exit.killed_by_us) << "it had to be killed";
  EXPECT_TRUE(exit.exited);
  EXPECT_EQ(exit.exit_code, 0);
}

}  // namespace
}  // namespace infertune
