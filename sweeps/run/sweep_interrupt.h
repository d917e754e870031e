#pragma once
// Ctrl-C (SIGINT) and SIGTERM while a sweep runs. The first asks the runner to stop after the trial that is
// running (the worker is in its own process group, so a terminal's Ctrl-C does not reach it and it finishes
// that trial); the second kills the runner's worker processes at once, so the runner stops without waiting
// (the trial that was killed is not recorded and stays for --resume). The signal handler only counts and
// wakes a watcher thread through a pipe; the watcher does the rest outside signal context.
#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "kernels/result.h"

namespace infertune {

class InterruptWatch {
 public:
  // `on_signal` (optional) runs on the watcher thread after each signal with the count so far.
  // Only one watch may be installed at a time; the destructor restores the previous handlers.
  static Result<std::unique_ptr<InterruptWatch>> install(std::function<void(int count)> on_signal = {});
  ~InterruptWatch();
  InterruptWatch(const InterruptWatch&) = delete;
  InterruptWatch& operator=(const InterruptWatch&) = delete;

  bool stop_requested() const;      // at least one signal
  bool abort_requested() const;     // two or more: the workers were killed
  std::string signal_name() const;  // of the first signal ("SIGINT"), empty before one

 private:
  InterruptWatch() = default;
  void watch(std::function<void(int)> on_signal);
  std::thread watcher_;
  int pipe_[2] = {-1, -1};
};

// Sends SIGKILL to every child process of this one, and to the process group of each child that leads
// one (a worker and anything it started). Returns how many children there were.
int kill_child_processes();

}  // namespace infertune
