#include "io/skip_on_success.hpp"

namespace iocpbench::io {

nlohmann::json to_json(const SkipOnSuccessCounts& c, const char* scope) {
  return {{"requested", to_string(c.requested)},
          {"asked", c.asked},
          {"handles", c.handles},
          {"granted", c.granted},
          {"not_asked_non_ifs", c.not_asked_non_ifs},
          {"refusal_error", c.refusal_error},
          {"immediate", c.immediate.load()},
          {"handled_inline", c.handled_inline.load()},
          {"posted_by_issuer", c.posted_by_issuer.load()},
          {"scope", scope}};
}

}  // namespace iocpbench::io
