// Order statistics of per-frame timings, and a minimal JSON writer for the bench's report.
#pragma once
#include <cmath>
#include <limits>
#include <ostream>
#include <string>
#include <vector>

namespace kestrel::bench {

constexpr double kNotMeasured = std::numeric_limits<double>::quiet_NaN();

/// Summary of the finite values of a series (NaN = frame not measured): n, min, p10, median, p90,
/// p99, max, mean. Percentiles interpolate linearly between order statistics (q * (n - 1)).
struct Summary {
    int n = 0;
    double min = kNotMeasured, p10 = kNotMeasured, median = kNotMeasured, p90 = kNotMeasured,
           p99 = kNotMeasured, max = kNotMeasured, mean = kNotMeasured;
};
Summary summarize(const std::vector<double>& values);
/// q-quantile (q in [0, 1]) of already sorted finite values.
double quantile_sorted(const std::vector<double>& sorted, double q);

/// Streaming JSON writer: objects, arrays, numbers (NaN/inf written as null), strings (escaped).
class Json {
public:
    explicit Json(std::ostream& os) : os_(os) {}
    Json& begin_object(const char* key = nullptr);
    Json& end_object();
    Json& begin_array(const char* key = nullptr);
    Json& end_array();
    Json& value(const char* key, double v);
    Json& value(const char* key, long long v);
    Json& value(const char* key, int v) { return value(key, static_cast<long long>(v)); }
    Json& value(const char* key, bool v);
    Json& value(const char* key, const std::string& v);
    Json& value(const char* key, const char* v) { return value(key, std::string(v)); }
    Json& item(double v) { return value(nullptr, v); }

private:
    void prefix(const char* key);
    std::ostream& os_;
    std::vector<bool> first_{true};
    int depth_ = 0;
};

std::string json_escape(const std::string& s);

}  // namespace kestrel::bench
