#include "cli/help_format.hpp"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <sstream>

#include "platform/terminal.hpp"

namespace iocpbench::cli {
namespace {

constexpr std::size_t kDefaultWidth = 80;
constexpr std::size_t kMinWidth = 40;

// The headings in the order they print; a group not named here (a command's own) follows
// Common.
constexpr std::array<const char*, 6> kGroupOrder{kGroupCommon, "Options", kGroupPost, kGroupFile,
                                                 kGroupSocket, kGroupAdvanced};

// One paragraph (no '\n') filled to `width`.
void fill(std::ostringstream& out, const std::string& paragraph, std::size_t width) {
  std::istringstream words(paragraph);
  std::string word;
  std::size_t column = 0;
  while (words >> word) {
    if (column > 0 && column + 1 + word.size() > width) {
      out << '\n';
      column = 0;
    } else if (column > 0) {
      out << ' ';
      ++column;
    }
    out << word;
    column += word.size();
  }
}

class HelpFormatter : public CLI::Formatter {
 public:
  explicit HelpFormatter(std::size_t width) : width_(width) {}

  std::string make_option_desc(const CLI::Option* opt) const override {
    return wrap_text(CLI::Formatter::make_option_desc(opt), description_width());
  }

  std::string make_description(const CLI::App* app) const override {
    const std::string text = CLI::Formatter::make_description(app);
    return text.empty() ? text : wrap_text(text, width_) + "\n";
  }

  std::string make_footer(const CLI::App* app) const override {
    const std::string footer = app->get_footer();
    return footer.empty() ? footer : wrap_text(footer, width_) + "\n";
  }

  std::string make_subcommand(const CLI::App* sub) const override {
    std::stringstream out;
    CLI::detail::format_help(out, sub->get_display_name(), wrap_text(sub->get_description(), description_width()),
                             column_width_);
    return out.str();
  }

  // CLI11's make_help with the groups in kGroupOrder (its make_groups prints them in the order
  // the options were added, and is not virtual in every version).
  std::string make_help(const CLI::App* app, std::string name, CLI::AppFormatMode mode) const override {
    if (mode == CLI::AppFormatMode::Sub) return make_expanded(app);
    std::stringstream out;
    out << make_description(app) << make_usage(app, name) << make_positionals(app)
        << ordered_groups(app, mode) << make_subcommands(app, mode) << '\n' << make_footer(app);
    return out.str();
  }

 private:
  std::string ordered_groups(const CLI::App* app, CLI::AppFormatMode mode) const {
    std::vector<std::string> groups = app->get_groups();
    std::stable_sort(groups.begin(), groups.end(), [](const std::string& a, const std::string& b) {
      return rank(a) < rank(b);
    });
    std::ostringstream out;
    for (const std::string& group : groups) {
      const std::vector<const CLI::Option*> opts = app->get_options([&](const CLI::Option* opt) {
        return opt->get_group() == group && opt->nonpositional() &&
               (mode != CLI::AppFormatMode::Sub ||
                (app->get_help_ptr() != opt && app->get_help_all_ptr() != opt));
      });
      if (group.empty() || opts.empty()) continue;
      out << make_group(group, false, opts);  // it starts with the blank line between groups
    }
    return out.str();
  }

  static std::size_t rank(const std::string& group) {
    for (std::size_t i = 0; i < kGroupOrder.size(); ++i) {
      if (group == kGroupOrder[i]) return i;
    }
    return 1;  // a command's own group: beside its other options
  }

  std::size_t description_width() const {
    return width_ > column_width_ + 20 ? width_ - column_width_ : 20;
  }

  std::size_t width_;
};

}  // namespace

std::size_t help_width() {
  std::size_t width = 0;
  if (const char* columns = std::getenv("COLUMNS")) width = std::strtoul(columns, nullptr, 10);
  if (width == 0) width = platform::stdout_terminal_columns();
  if (width == 0) width = kDefaultWidth;
  return std::max(width, kMinWidth);
}

std::string wrap_text(const std::string& text, std::size_t width) {
  std::ostringstream out;
  std::istringstream lines(text);
  std::string line;
  bool first = true;
  while (std::getline(lines, line)) {
    if (!first) out << '\n';
    first = false;
    if (!line.empty() && line.front() == ' ') {
      out << line;  // an example: its spacing is its meaning
    } else {
      fill(out, line, width);
    }
  }
  return out.str();
}

std::shared_ptr<CLI::Formatter> make_help_formatter(std::size_t width) {
  return std::make_shared<HelpFormatter>(width);
}

void group_options(CLI::App& command, const char* group, const std::vector<std::string>& names) {
  for (const auto& name : names) {
    if (CLI::Option* option = command.get_option_no_throw(name)) option->group(group);
  }
}

}  // namespace iocpbench::cli
