#pragma once
// How long a waiting thread spins before it sleeps (spin_wait.h): within the --poll cap, only about as long as
// its waits usually take, kSpinOverTypical times the average wait that ended while it spun.
//
// Why: on a quiet machine the partner a thread waits for (a worker finishing its rows, the caller posting the
// next operation) arrives within microseconds, and a short spin catches it. When the partner has lost its core
// to another process, spinning on is wasted: the waiter gives up after a few typical lengths and sleeps,
// so that its core can run the partner (the scheduler moves a queued thread to an idle core), instead of
// burning up to the cap (1 ms at the default poll) at each of the hundred or so waits of a token. And a waiter does not
// call sched_yield while it spins (except at
// --poll 100, which never sleeps): on Linux's EEVDF scheduler a yield hands the core to a competing process
// for that process's whole slice, so a waiter that yielded saw its partner's arrival milliseconds late.
//
// Measured with `infertune bench -p 0 -n 16 -r 3 -t 2` on Gemma 3 270M Q4_K_M, on a 2-core machine quiet and
// beside one and two busy loops, six interleaved rounds each; t/s, the median of the rounds (their range):
//   before (yield every 64 pauses, 1 ms cap):  quiet 66.9, one loop 23.7 (16.5-35.9), two 15.9 (3.9-38.2)
//   no yield, the full 1 ms cap:               one loop 9.0 and 9.3 (two rounds)
//   adaptive, at least 20 us (this):           quiet 64.3, one loop 34.4 (28.9-36.0), two 33.1 (13.0-33.6)
// pp128 quiet: 996 before, 1019 now. On the 2.5M-parameter fixture (tg32) the old spin collapsed to 25 t/s in
// four rounds of six beside two loops (2,500 now); quiet, both ran about 5,000.
#include <chrono>

#include "engine/threading/spin_wait.h"

namespace infertune {

inline constexpr int kSpinOverTypical = 8;
inline constexpr std::chrono::nanoseconds kMinSpin{20'000};         // cheap on a quiet machine, short on a busy one
inline constexpr std::chrono::nanoseconds kFirstTypicalWait{2000};  // before a thread has waited

// The spin before sleeping: kSpinOverTypical x the typical wait, at least kMinSpin, within the policy's budget;
// a policy that spins forever is not cut.
std::chrono::nanoseconds adaptive_spin_budget(const SpinPolicy& policy, std::chrono::nanoseconds typical_wait);

// The typical wait after one more that ended while spinning and took `waited`: an average weighting the newest
// wait 1/8.
std::chrono::nanoseconds next_typical_wait(std::chrono::nanoseconds typical_wait, std::chrono::nanoseconds waited);

}  // namespace infertune
