#pragma once
// Numbers with units, as fio and hyperfine take them: durations (`0.3s`, `500ms`, `2m`) and sizes
// (`4k`, `64MiB`) beside plain numbers. A plain number keeps the flag's own unit (seconds for
// --duration, microseconds for --work-us, bytes for --block-size, MiB for --file-size-mib), so
// every command line that worked before means what it meant. A unit not listed here is refused,
// never guessed.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace iocpbench::core {

// Durations: us, ms, s, m (min), h. Returns the value in `base_s` units (1 for seconds, 1e-6
// for microseconds); nothing, with `reason` set, when the text is not a finite non-negative
// number with a known unit.
std::optional<double> parse_duration(std::string_view text, double base_s, std::string* reason);

// Sizes, powers of 1024 as fio counts them: b; k, kb, kib; m, mb, mib; g, gb, gib (any case).
// Returns a whole number of `base_bytes` units (1 for bytes, 1 << 20 for MiB); nothing, with
// `reason` set, when the text is not a whole non-negative number of them with a known unit.
std::optional<std::uint64_t> parse_size(std::string_view text, std::uint64_t base_bytes, std::string* reason);

// A plain number, the whole text and finite ("0.5", "1e3"); false for anything else.
bool parse_plain_number(std::string_view text, double& out);

// A number as spec texts write it back: printf's %g ("0.5", "100", "1e+06").
std::string short_number_text(double value);
// A number with `digits` decimals, as messages print it: printf's %.*f ("0.25", "812.0").
std::string fixed(double value, int digits);

// The units each parser knows, for help and errors.
inline constexpr const char* kDurationUnits = "us, ms, s, m, h";
inline constexpr const char* kSizeUnits = "b, k/KiB, m/MiB, g/GiB";

}  // namespace iocpbench::core
