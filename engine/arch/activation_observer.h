#pragma once
// Something that sees the input of every weight matrix during the forward passes run on the thread that installed it
// (`infertune imatrix` sums the squared activations per input column). The forward pass calls it once per weight
// and step, with the float input before it is quantized, on the thread that runs the step.
//
//   ImportanceMatrix collector;                       // an ActivationObserver
//   const ScopedActivationObserver watching(collector);
//   ctx->decode(tokens, Logits::All);                 // collector.observe("blk.0.attn_q.weight", x, ...) ...
#include <cstddef>
#include <span>
#include <string_view>

namespace infertune {

class ActivationObserver {
 public:
  virtual ~ActivationObserver() = default;
  // x [n_tokens][n_cols]: the input of weight `name` (the same input for the weights that share it, each named).
  virtual void observe(std::string_view name, std::span<const float> x, size_t n_tokens, size_t n_cols) = 0;
};

// The calling thread's observer; null when none is installed.
ActivationObserver* activation_observer();

// Installs an observer for the calling thread while it lives (restoring the one before).
class ScopedActivationObserver {
 public:
  explicit ScopedActivationObserver(ActivationObserver& observer);
  ~ScopedActivationObserver();
  ScopedActivationObserver(const ScopedActivationObserver&) = delete;
  ScopedActivationObserver& operator=(const ScopedActivationObserver&) = delete;

 private:
  ActivationObserver* previous_;
};

}  // namespace infertune
