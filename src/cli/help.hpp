// spira CLI: the help text of the tool and of each command. docs/cli.md quotes these texts
// verbatim; tests/cli/test_cli_help.py fails when the two disagree.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace spira::cli {

/// The help of `command` ("" for the tool itself: the list of commands), or nullopt for a name
/// that is not a command.
[[nodiscard]] std::optional<std::string> help_text(std::string_view command);

}  // namespace spira::cli
