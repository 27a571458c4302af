#include "cli/port_flag.hpp"

#include "cli/commands.hpp"

namespace iocpbench::cli {

void add_port_flag(CLI::App& command, std::string& name) {
  name = std::string(port::to_string(port::default_backend()));
  command
      .add_option("--port", name, kPortHelp)
      ->capture_default_str()
      ->type_name("TEXT");
}

port::Backend resolve_port_flag(const std::string& name) {
  const auto backend = port::parse_backend(name);
  if (!backend) {
    throw BadInput{"--port", "unknown backend '" + name + "' (" + port::backend_names() + ")"};
  }
  if (!port::backend_available(*backend)) {
    throw BadInput{"--port", "backend '" + name + "' is not available in this build on this OS"};
  }
  return *backend;
}

}  // namespace iocpbench::cli
