// spira CLI: one function per subcommand. Each parses its own options (args.hpp), does its work
// through the public library API and returns the process exit status. Errors are thrown and turned
// into one line on stderr by main().
#pragma once

#include <spira/resources.hpp>

#include <string>

namespace spira::cli {

int run_info(int argc, char** argv);
int run_distance(int argc, char** argv);
int run_topk(int argc, char** argv);
int run_knn(int argc, char** argv);

/// The backends a command can run on, after resolving --backend auto|host|cuda.
enum class backend { host, cuda };

/// Resolves the --backend option: `auto` picks CUDA when this build has it and a device is present
/// and `cuda_supported` (the command has a CUDA implementation in this build), else the host.
/// An explicit `cuda` that cannot run is an error naming the reason.
backend resolve_backend(const std::string& requested, bool cuda_supported, const char* command);

}  // namespace spira::cli
