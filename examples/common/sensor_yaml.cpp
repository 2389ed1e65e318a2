// The sensor.yaml reader (sensor_yaml.hpp): one pass over the lines, lists gathered across lines, then the
// camera assembled and validated; every message names "<file>:<line>".
#include "sensor_yaml.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <vector>

#include "kestrel/error.hpp"

namespace kestrel_examples {
namespace {

struct Value {
    std::string text;  // the value after "key:", comments removed; lists joined over their lines
    int line = 0;      // where the key is
};

std::string trim(const std::string& s) {
    const auto b = s.find_first_not_of(" \t\r");
    if (b == std::string::npos) return "";
    const auto e = s.find_last_not_of(" \t\r");
    return s.substr(b, e - b + 1);
}

[[noreturn]] void fail(const std::string& name, int line, const std::string& what) {
    throw SensorYamlError(name + ":" + std::to_string(line) + ": " + what);
}

/// The numbers of a "[a, b, c]" list.
std::vector<double> numbers(const std::string& name, const std::string& key, const Value& v) {
    const std::string t = trim(v.text);
    if (t.size() < 2 || t.front() != '[' || t.back() != ']')
        fail(name, v.line, "'" + key + "' must be a list in brackets, e.g. [1, 2], not '" + t + "'");
    std::vector<double> out;
    const std::string inner = trim(t.substr(1, t.size() - 2));
    if (inner.empty()) return out;
    std::stringstream ss(inner);
    std::string item;
    while (std::getline(ss, item, ',')) {
        const std::string s = trim(item);
        char* end = nullptr;
        errno = 0;
        const double d = s.empty() ? 0.0 : std::strtod(s.c_str(), &end);
        if (s.empty() || end != s.c_str() + s.size() || errno == ERANGE || !std::isfinite(d))
            fail(name, v.line, "'" + key + "': '" + s + "' is not a finite number");
        out.push_back(d);
    }
    return out;
}

std::vector<double> numbers_n(const std::string& name, const std::string& key, const Value& v, std::size_t n) {
    const std::vector<double> d = numbers(name, key, v);
    if (d.size() != n)
        fail(name, v.line, "'" + key + "' must have " + std::to_string(n) + " numbers, it has " + std::to_string(d.size()));
    return d;
}

int integer(const std::string& name, const std::string& key, const Value& v, double d) {
    if (d != std::floor(d) || d < 1 || d > 1e9) fail(name, v.line, "'" + key + "': " + trim(v.text) + " must hold positive integers");
    return static_cast<int>(d);
}

}  // namespace

SensorYaml parse_sensor_yaml(const std::string& text, const std::string& name) {
    std::map<std::string, Value> top;    // top-level keys
    std::map<std::string, Value> tbs;    // T_BS's nested keys
    std::istringstream in(text);
    std::string raw;
    int line = 0, last_line = 0;
    bool in_tbs = false;
    Value* open_list = nullptr;  // a list still waiting for its ']'
    while (std::getline(in, raw)) {
        ++line;
        last_line = line;
        const std::string no_comment = raw.substr(0, raw.find('#'));
        const std::string t = trim(no_comment);
        if (open_list) {
            if (t.find(':') != std::string::npos)
                fail(name, open_list->line, "list without its closing ']' (line " + std::to_string(line) + " holds a key)");
            open_list->text += " " + t;
            if (t.find(']') != std::string::npos) open_list = nullptr;
            continue;
        }
        if (t.empty()) continue;
        const bool indented = no_comment[0] == ' ' || no_comment[0] == '\t';
        const auto colon = t.find(':');
        if (colon == std::string::npos) fail(name, line, "expected 'key: value', got '" + t + "'");
        const std::string key = trim(t.substr(0, colon));
        Value v{trim(t.substr(colon + 1)), line};
        std::map<std::string, Value>* into = &top;
        if (indented) {
            if (!in_tbs) fail(name, line, "unexpected indented line '" + t + "' (only T_BS has nested keys)");
            if (key != "cols" && key != "rows" && key != "data")
                fail(name, line, "unknown key 'T_BS." + key + "' (expected cols, rows, data)");
            into = &tbs;
        } else {
            in_tbs = key == "T_BS";
        }
        if (into->count(key)) fail(name, line, "key '" + key + "' given twice (first on line " + std::to_string((*into)[key].line) + ")");
        Value& stored = (*into)[key] = v;
        if (!v.text.empty() && v.text.front() == '[' && v.text.find(']') == std::string::npos) open_list = &stored;
    }
    if (open_list) fail(name, open_list->line, "list without its closing ']' (the file ends on line " + std::to_string(last_line) + ")");

    const auto need = [&](std::map<std::string, Value>& m, const std::string& key) -> const Value& {
        const auto it = m.find(key);
        if (it == m.end())
            fail(name, last_line, "missing key '" + key + "' (read to the end of the file, line " + std::to_string(last_line) + ")");
        return it->second;
    };

    SensorYaml out;
    kestrel::Camera& cam = out.camera;
    const Value& model = need(top, "camera_model");
    if (model.text != "pinhole")
        fail(name, model.line, "camera_model '" + model.text + "' is not supported (pinhole only)");
    const Value& intr = need(top, "intrinsics");
    const std::vector<double> k = numbers_n(name, "intrinsics", intr, 4);
    cam.fx = k[0];
    cam.fy = k[1];
    cam.cx = k[2];
    cam.cy = k[3];
    const Value& res = need(top, "resolution");
    const std::vector<double> wh = numbers_n(name, "resolution", res, 2);
    cam.width = integer(name, "resolution", res, wh[0]);
    cam.height = integer(name, "resolution", res, wh[1]);
    const Value& dm = need(top, "distortion_model");
    const Value& dc = need(top, "distortion_coefficients");
    const std::vector<double> d = numbers(name, "distortion_coefficients", dc);
    if (dm.text == "radial-tangential" || dm.text == "radtan") {
        cam.model = kestrel::CameraModel::PinholeRadtan;
        if (d.size() != 4 && d.size() != 5)
            fail(name, dc.line, "'distortion_coefficients' must have 4 numbers (k1, k2, p1, p2) or 5 (+ k3) for " +
                                    dm.text + ", it has " + std::to_string(d.size()));
    } else if (dm.text == "equidistant") {
        cam.model = kestrel::CameraModel::Fisheye;
        if (d.size() != 4)
            fail(name, dc.line, "'distortion_coefficients' must have 4 numbers (k1, k2, k3, k4) for equidistant, it has " +
                                    std::to_string(d.size()));
    } else if (dm.text == "none") {
        cam.model = kestrel::CameraModel::Pinhole;
        if (!d.empty()) fail(name, dc.line, "'distortion_coefficients' must be [] for distortion_model none");
    } else {
        fail(name, dm.line, "distortion_model '" + dm.text + "' is not supported (radial-tangential, radtan, equidistant, none)");
    }
    for (std::size_t i = 0; i < d.size(); ++i) cam.d[i] = d[i];

    const Value& t = need(top, "T_BS");
    if (!t.text.empty()) fail(name, t.line, "T_BS must be followed by indented cols, rows and data");
    const Value& cols = need(tbs, "cols");
    const Value& rows = need(tbs, "rows");
    if (cols.text != "4") fail(name, cols.line, "T_BS cols must be 4, not '" + cols.text + "'");
    if (rows.text != "4") fail(name, rows.line, "T_BS rows must be 4, not '" + rows.text + "'");
    const Value& data = need(tbs, "data");
    const std::vector<double> m = numbers_n(name, "T_BS data", data, 16);
    for (int i = 0; i < 16; ++i) out.T_BS[i] = m[i];
    out.T_BS_line = data.line;

    try {
        kestrel::validate(cam, "sensor.yaml camera");
    } catch (const kestrel::InvalidArgument& e) {
        const std::string& p = e.parameter();
        const int at = (p == "fx" || p == "fy" || p == "cx" || p == "cy") ? intr.line
                       : (p == "width" || p == "height")                   ? res.line
                                                                           : dc.line;
        fail(name, at, e.what());
    }
    return out;
}

std::string rigid_transform_problem(const double* T) {
    for (int i = 0; i < 16; ++i)
        if (!std::isfinite(T[i])) return "entry " + std::to_string(i) + " is not finite";
    if (T[12] != 0.0 || T[13] != 0.0 || T[14] != 0.0 || T[15] != 1.0)
        return "is not a rigid transform: its last row must be 0, 0, 0, 1";
    double worst = 0.0;
    for (int a = 0; a < 3; ++a)
        for (int b = 0; b < 3; ++b) {
            double d = 0.0;
            for (int c = 0; c < 3; ++c) d += T[4 * c + a] * T[4 * c + b];
            worst = std::max(worst, std::fabs(d - (a == b ? 1.0 : 0.0)));
        }
    char buf[160];
    if (!(worst <= 1e-6)) {
        std::snprintf(buf, sizeof buf, "is not a rigid transform: its rotation block R has |R^T R - I| = %.3g, above 1e-06 "
                      "(per entry)", worst);
        return buf;
    }
    const double det = T[0] * (T[5] * T[10] - T[6] * T[9]) - T[1] * (T[4] * T[10] - T[6] * T[8]) +
                       T[2] * (T[4] * T[9] - T[5] * T[8]);
    if (!(det > 0.0)) {
        std::snprintf(buf, sizeof buf, "is not a rigid transform: its rotation block is a reflection (det %.6g, must be "
                      "+1)", det);
        return buf;
    }
    return "";
}

SensorYaml read_sensor_yaml(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    if (!f) throw SensorYamlError(path + ": cannot open the file");
    std::ostringstream ss;
    ss << f.rdbuf();
    return parse_sensor_yaml(ss.str(), path);
}

}  // namespace kestrel_examples
