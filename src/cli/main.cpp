// spira: command-line front end of the library.
#include "args.hpp"
#include "commands.hpp"
#include "help.hpp"

#include <spira/config.hpp>
#include <spira/error.hpp>
#include <spira/io.hpp>

#include <csignal>
#include <cstdio>
#include <cstring>
#include <exception>
#include <new>
#include <string>

namespace spira::cli {

backend resolve_backend(const std::string& requested, bool cuda_supported, const char* command)
{
  if (requested == "host") {
    return backend::host;
  }
  const bool device_ready = cuda_compiled() && cuda_device_count() > 0;
  if (requested == "auto") {
    return device_ready && cuda_supported ? backend::cuda : backend::host;
  }
  if (requested == "cuda") {
    if (!cuda_compiled()) {
      throw not_compiled("--backend cuda: this build of spira was compiled without CUDA");
    }
    if (!cuda_supported) {
      throw not_compiled(detail::concat("--backend cuda: '", command,
                                        "' has no CUDA implementation in this version; use "
                                        "--backend host"));
    }
    if (!device_ready) {
      throw invalid_argument("--backend cuda: no CUDA device is available");
    }
    return backend::cuda;
  }
  throw usage_error("--backend: '" + requested + "' is not one of auto, host, cuda");
}

}  // namespace spira::cli

namespace {

/// One line on stderr; bytes a file or argument supplied are escaped when not printable UTF-8.
void report(const std::string& command, const char* what)
{
  std::string line = spira::detail::printable(what);
  std::fprintf(stderr, "spira %s: %s\n", spira::detail::printable(command).c_str(), line.c_str());
}

/// SIGINT, SIGTERM, SIGHUP: remove the output being written, then die of the signal as usual.
extern "C" void on_fatal_signal(int sig)
{
  spira::io::remove_unfinished_outputs();
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

}  // namespace

int main(int argc, char** argv)
{
  using namespace spira::cli;
  if (argc < 2 || std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0) {
    std::fputs(help_text("")->c_str(), argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  const std::string command = argv[1];
  // COMMAND --help (or -h) anywhere among the arguments: that command's help, nothing else.
  for (int i = 2; i < argc; ++i) {
    if (std::strcmp(argv[i], "--help") != 0 && std::strcmp(argv[i], "-h") != 0) {
      continue;
    }
    if (const auto text = help_text(command); text && !command.empty()) {
      std::fputs(text->c_str(), stdout);
      return 0;
    }
  }
  for (const int sig : {SIGINT, SIGTERM, SIGHUP}) {
    std::signal(sig, on_fatal_signal);
  }
  try {
    if (command == "--version") {
      std::printf("spira %s\n", spira::version());
      return 0;
    }
    if (command == "info") {
      return run_info(argc, argv);
    }
    if (command == "distance") {
      return run_distance(argc, argv);
    }
    if (command == "topk") {
      return run_topk(argc, argv);
    }
    if (command == "knn") {
      return run_knn(argc, argv);
    }
    throw usage_error("unknown command '" + command + "' (try spira --help)");
  } catch (const usage_error& e) {
    report(command, e.what());
    return 2;
  } catch (const std::bad_alloc&) {
    report(command, "out of memory (try a smaller --memory-budget-mb)");
    return 1;
  } catch (const std::exception& e) {
    report(command, e.what());
    return 1;
  }
}
