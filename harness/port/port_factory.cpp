#include <array>

#include "port/asio_port.hpp"
#include "port/completion_port.hpp"
#include "port/condvar_port.hpp"
#include "port/emulated_port.hpp"
#include "port/native_port.hpp"

namespace iocpbench::port {

const char* to_string(RemoveStatus status) {
  switch (status) {
    case RemoveStatus::ok: return "ok";
    case RemoveStatus::io_failed: return "io_failed";
    case RemoveStatus::timeout: return "timeout";
    case RemoveStatus::abandoned: return "abandoned";
    case RemoveStatus::invalid_handle: return "invalid_handle";
    case RemoveStatus::invalid_parameter: return "invalid_parameter";
  }
  return "unknown";
}

namespace {
constexpr std::array<std::pair<Backend, std::string_view>, 4> kNames{{
    {Backend::emulated, "emulated"},
    {Backend::win32, "win32"},
    {Backend::condvar, "condvar"},
    {Backend::asio, "asio"},
}};
}  // namespace

std::optional<Backend> parse_backend(std::string_view name) {
  for (const auto& [backend, text] : kNames) {
    if (text == name) return backend;
  }
  return std::nullopt;
}

std::string_view to_string(Backend backend) {
  for (const auto& [candidate, text] : kNames) {
    if (candidate == backend) return text;
  }
  return "unknown";
}

Backend default_backend() { return native_port_available() ? Backend::win32 : Backend::emulated; }

bool backend_available(Backend backend) {
  switch (backend) {
    case Backend::emulated: return true;
    case Backend::win32: return native_port_available();
    case Backend::condvar:
    case Backend::asio: return true;  // comparison dispatchers, built on every OS
  }
  return false;
}

std::unique_ptr<CompletionPort> make_port(Backend backend, const PortOptions& options) {
  switch (backend) {
    case Backend::emulated: return std::make_unique<EmulatedPort>(options);
    case Backend::win32: return make_native_port(options);
    case Backend::condvar: return std::make_unique<CondvarPort>(options);
    case Backend::asio: return std::make_unique<AsioPort>(options);
  }
  return nullptr;
}

}  // namespace iocpbench::port
