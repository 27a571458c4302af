#include "cli/option_help.hpp"

#include <sstream>

namespace iocpbench::cli {

CLI::Option* add_text_option(CLI::App& command, const std::string& name, std::string& text,
                             const std::string& help, const std::string& type,
                             const std::string& default_text) {
  CLI::Option* option = command.add_option(name, text, help)->type_name(type);
  // default_str only labels the help: the text stays empty when the flag is not given.
  if (!default_text.empty()) option->default_str(default_text);
  return option;
}

std::string number_text(double value) {
  std::ostringstream text;
  text << value;
  return text.str();
}

}  // namespace iocpbench::cli
