// Minimal command-line parsing for the examples: "--name value", "--name=value", flags and
// positional arguments. Unknown options and malformed numbers are reported as UsageError.
#pragma once
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace kestrel_examples {

/// A command-line mistake: the example prints it with its usage and exits with status 2.
struct UsageError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

/// A decimal number: [sign] digits [. digits] [e [sign] digits], at least one digit before the exponent (no
/// hexadecimal "0x10", no "inf" or "nan", which strtod would also read).
bool is_decimal(const std::string& text);

class Args {
public:
    /// `flags`: names (without "--") that take no value; every other "--name" takes one.
    Args(int argc, char** argv, std::set<std::string> flags);

    bool flag(const std::string& name);  ///< true when --name was given
    bool has(const std::string& name);   ///< true when --name value was given
    std::string get(const std::string& name, const std::string& fallback);
    int get_int(const std::string& name, int fallback);
    /// A float, read strictly as get_double reads (one decimal number).
    float get_float(const std::string& name, float fallback);
    /// A finite double, read strictly (the whole value must be one decimal number: "3px", "abc", "0x10" and "inf"
    /// are UsageErrors).
    double get_double(const std::string& name, double fallback);
    /// An unsigned 64-bit integer, read strictly (digits only).
    unsigned long long get_uint64(const std::string& name, unsigned long long fallback);
    const std::vector<std::string>& positional() const { return positional_; }

    /// Throws UsageError naming the first option that no get/flag/has call asked about.
    void reject_unknown() const;

private:
    struct Opt {
        std::string name, value;
        bool is_flag = false;
    };
    const Opt* find(const std::string& name);
    std::vector<Opt> opts_;
    std::vector<std::string> positional_;
    std::set<std::string> flags_, asked_;
};

}  // namespace kestrel_examples
