#include "engine/arch/activation_observer.h"

namespace infertune {
namespace {

thread_local ActivationObserver* current_observer = nullptr;

}  // namespace

ActivationObserver* activation_observer() { return current_observer; }

ScopedActivationObserver::ScopedActivationObserver(ActivationObserver& observer) : previous_(current_observer) {
  current_observer = &observer;
}

ScopedActivationObserver::~ScopedActivationObserver() { current_observer = previous_; }

}  // namespace infertune
