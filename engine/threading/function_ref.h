#pragma once
// A non-owning reference to a callable, for calls that return before the callable goes away (the pool
// runs a task and waits for it). Unlike std::function it never allocates and costs one indirect call.
#include <memory>
#include <type_traits>
#include <utility>

namespace infertune {

template <class Signature>
class FunctionRef;

template <class R, class... Args>
class FunctionRef<R(Args...)> {
 public:
  template <class F>
  requires(!std::is_same_v<std::remove_cvref_t<F>, FunctionRef> && std::is_invocable_r_v<R, F&, Args...>)
      FunctionRef(F&& f)
  noexcept  // NOLINT(google-explicit-constructor): passed like a lambda
      : object_(const_cast<void*>(static_cast<const void*>(std::addressof(f)))),
        call_([](void* object, Args... args) -> R {
          return (*static_cast<std::remove_reference_t<F>*>(object))(std::forward<Args>(args)...);
        }) {}

  R operator()(Args... args) const { return call_(object_, std::forward<Args>(args)...); }

 private:
  void* object_;
  R (*call_)(void*, Args...);
};

}  // namespace infertune
