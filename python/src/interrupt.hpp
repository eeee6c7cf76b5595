// spira Python bindings: long calls that Ctrl-C can end and that report their progress.
//
//   interruptible_call call(progress);          // progress: None or a callable(done, total)
//   params.progress = call.callback();
//   call.run([&] { result = kneighbors(...); }); // the GIL is released inside run
//
// The library calls the callback between tiles, from the thread that made the call (never from an
// OpenMP worker). The callback takes the GIL back for a moment, runs the Python signal handlers
// (PyErr_CheckSignals: Ctrl-C raises KeyboardInterrupt in the main thread) and calls `progress`.
// A call from another thread without `progress` gets no callback: Python runs signal handlers in
// the main thread only, so there is nothing to check, and the library keeps its own tiles (a
// callback makes it report about 20 times per call, in smaller tiles).
// When either raises, the Python exception is kept and the computation is stopped by throwing
// `interrupted`, which unwinds the library's tiles (all of them owned by RAII objects, so nothing
// leaks); run() then raises the kept exception in Python.
#pragma once

#include <nanobind/nanobind.h>

#include <cstdint>
#include <exception>
#include <functional>
#include <optional>
#include <utility>

namespace spira::python {

/// Thrown by interruptible_call's callback to stop a computation; never leaves run().
struct interrupted : std::exception {
  const char* what() const noexcept override { return "spira: the computation was interrupted"; }
};

class interruptible_call {
 public:
  /// progress: None, or a Python callable(done, total) called after each tile with the GIL held.
  explicit interruptible_call(nanobind::object progress) : progress_(std::move(progress))
  {
    const bool reports = progress_.is_valid() && !progress_.is_none();
    const auto main_thread = nanobind::module_::import_("threading").attr("main_thread")();
    needed_ = reports || nanobind::cast<unsigned long>(main_thread.attr("ident")) ==
                             PyThread_get_thread_ident();
  }

  /// The callback for knn_params::progress and the bindings' own loops: (rows done, total rows),
  /// or an empty function when nothing needs it (see above). Called without the GIL; throws
  /// `interrupted` when a signal handler or `progress` raised.
  [[nodiscard]] std::function<void(std::int64_t, std::int64_t)> callback()
  {
    if (!needed_) {
      return {};
    }
    return [this](std::int64_t done, std::int64_t total) { check(done, total); };
  }

  /// Runs fn() with the GIL released; a Python exception raised by the callback (KeyboardInterrupt
  /// after Ctrl-C, or what `progress` raised) is raised again here, with the GIL held.
  template <class Fn>
  void run(Fn&& fn)
  {
    try {
      nanobind::gil_scoped_release release;
      fn();
    } catch (const interrupted&) {
      // `release` has taken the GIL back by now.
      if (error_) {
        nanobind::python_error e = std::move(*error_);
        error_.reset();
        throw e;
      }
      PyErr_SetNone(PyExc_KeyboardInterrupt);
      throw nanobind::python_error();
    }
  }

 private:
  void check(std::int64_t done, std::int64_t total)
  {
    nanobind::gil_scoped_acquire gil;
    if (PyErr_CheckSignals() != 0) {
      error_.emplace();  // fetches and clears the exception the signal handler raised
      throw interrupted{};
    }
    if (progress_.is_valid() && !progress_.is_none()) {
      try {
        progress_(done, total);
      } catch (nanobind::python_error& e) {
        error_.emplace(std::move(e));
        throw interrupted{};
      }
    }
  }

  nanobind::object progress_;
  bool needed_ = true;
  std::optional<nanobind::python_error> error_;
};

}  // namespace spira::python
