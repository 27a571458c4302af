#include "cli/unknown_args.hpp"

#include <algorithm>
#include <cctype>
#include <vector>

namespace iocpbench::cli {
namespace {

// Every name an option of `command` answers to ("--workload", "-w"), the app's own included.
std::vector<std::string> option_names(const CLI::App& command) {
  std::vector<std::string> names;
  for (const CLI::App* app = &command; app != nullptr; app = app->get_parent()) {
    for (const CLI::Option* opt : app->get_options()) {
      for (const auto& name : opt->get_lnames()) names.push_back("--" + name);
      for (const auto& name : opt->get_snames()) names.push_back("-" + name);
    }
  }
  return names;
}

}  // namespace

std::size_t edit_distance(std::string_view a, std::string_view b) {
  // Optimal string alignment: a swap of two neighbours ("rnu" for "run") counts as one edit.
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.size()][b.size()];
}

std::optional<std::string> unknown_subcommand(const CLI::App& app, const std::string& word) {
  if (word.empty() || word.front() == '-') return std::nullopt;
  std::string names;
  for (const CLI::App* sub : app.get_subcommands({})) {
    if (sub->check_name(word)) return std::nullopt;
    names += (names.empty() ? "" : ", ") + sub->get_name();
  }
  return "unknown subcommand '" + word + "' (" + names + ")";
}

std::optional<std::string> unknown_option(const CLI::App& app, int argc, const char* const* argv) {
  const CLI::App* command = &app;
  for (const CLI::App* sub : app.get_subcommands({})) {
    if (argc > 1 && sub->check_name(argv[1])) command = sub;
  }
  const std::vector<std::string> known = option_names(*command);
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--") break;
    // An option: "--name", "--name=value" or "-x"; "-0.5" is a value.
    const bool long_option = arg.size() > 2 && arg.compare(0, 2, "--") == 0;
    const bool short_option = arg.size() == 2 && arg[0] == '-' && std::isalpha(static_cast<unsigned char>(arg[1]));
    if (!long_option && !short_option) continue;
    arg = arg.substr(0, arg.find('='));
    if (std::find(known.begin(), known.end(), arg) != known.end()) continue;
    std::string best;
    std::size_t best_distance = 0;
    for (const auto& name : known) {
      if (name.size() < 3) continue;  // a short flag is no suggestion for a long one
      const std::size_t d = edit_distance(arg, name);
      if (best.empty() || d < best_distance) {
        best = name;
        best_distance = d;
      }
    }
    const std::string where = command == &app ? std::string("iocpbench --help")
                                               : "iocpbench " + command->get_name() + " --help";
    // Close enough to be a typo: at most a third of the word changed.
    if (!best.empty() && best_distance * 3 <= arg.size()) {
      return "unknown option '" + arg + "' (did you mean " + best + "?)";
    }
    return "unknown option '" + arg + "' (" + where + " lists them)";
  }
  return std::nullopt;
}

}  // namespace iocpbench::cli
