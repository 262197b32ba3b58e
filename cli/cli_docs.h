// What kiln generates from its own CLI definitions (the CLI11 app main.cc builds), so that the
// shell completion, the man page and the unknown-command hint never disagree with the options:
// `kiln completion bash`, `kiln man`, and "did you mean tune?".
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "cli/common.h"

namespace kiln::cli {

// The visible subcommand of `app` closest to `name` by edit distance, when close enough to be a
// typo (at most a third of the longer name, and at least 2, edits); nullopt otherwise.
std::optional<std::string> closest_subcommand(const CLI::App& app, std::string_view name);

// A bash completion script for `app` (subcommands, nested subcommands and their options; file
// names where an option takes a value), to be sourced or installed as
// /usr/share/bash-completion/completions/kiln.
std::string bash_completion(const CLI::App& app);

// kiln(1) in roff (man -l): every visible command with its description and options.
std::string man_page(const CLI::App& app);

// `kiln completion bash` and `kiln man`: print the above. They read `app` when run, after every
// command has been added.
Command add_completion_command(CLI::App& app);
Command add_man_command(CLI::App& app);

}  // namespace kiln::cli
