// Test helpers of the bad-input suites (tests/test_bad_input*.cpp, table in docs/bad-input.md): a row
// is one bad call at a public entry point, the exception it must raise (type, parameter, the bound in
// the message), and a good call on the same object afterwards, which must work (checked against the
// CPU reference inside the row).
#pragma once
#include <gtest/gtest.h>

#include <exception>
#include <functional>
#include <iostream>
#include <ostream>
#include <string>
#include <utility>

#include "kestrel/error.hpp"
#include "test_data.hpp"

namespace kestrel::test {

enum class Expect {
    Invalid,  ///< InvalidArgument whose parameter() is `param` and whose message holds `text`
    State,    ///< StateError whose message holds `text`
};

/// The calls of one row, made fresh for every run: `bad` must throw; `good` (same objects) must work.
struct Case {
    std::function<void()> bad;
    std::function<void()> good;
};

struct Row {
    std::string id;     ///< test name, and the row's id in docs/bad-input.md
    Expect expect = Expect::Invalid;
    std::string param;  ///< InvalidArgument::parameter() (Expect::Invalid)
    std::string text;   ///< must appear in what(): the bound, or the function for StateError
    std::function<Case()> make;
    bool good_needs_gpu = false;  ///< the bad call needs no GPU, the good call does (constructors)
};

inline std::ostream& operator<<(std::ostream& os, const Row& r) { return os << r.id; }

inline std::string row_name(const ::testing::TestParamInfo<Row>& info) { return info.param.id; }

/// Row of a call that must throw InvalidArgument naming `param`, with `text` in the message.
inline Row invalid(std::string id, std::string param, std::string text, std::function<Case()> make,
                   bool good_needs_gpu = false) {
    return Row{std::move(id), Expect::Invalid, std::move(param), std::move(text), std::move(make), good_needs_gpu};
}

/// Row of a call on an object that cannot take it (moved-from, wrong backend): StateError.
inline Row state(std::string id, std::string text, std::function<Case()> make, bool good_needs_gpu = false) {
    return Row{std::move(id), Expect::State, "", std::move(text), std::move(make), good_needs_gpu};
}

/// Calls row.bad and checks the exception; then row.good on the same objects.
inline void run_row(const Row& row) {
    SCOPED_TRACE("row " + row.id);
    const Case c = row.make();
    try {
        c.bad();
        ADD_FAILURE() << row.id << ": the bad call did not throw";
    } catch (const InvalidArgument& e) {
        const std::string what = e.what();
        EXPECT_EQ(row.expect, Expect::Invalid) << "InvalidArgument where StateError was expected: " << what;
        EXPECT_EQ(e.parameter(), row.param) << what;
        EXPECT_NE(what.find("parameter '" + row.param + "'"), std::string::npos) << what;
        EXPECT_NE(what.find(row.text), std::string::npos) << "bound '" << row.text << "' not in: " << what;
        EXPECT_EQ(what.rfind("kestrel: ", 0), 0u) << what;
    } catch (const StateError& e) {
        const std::string what = e.what();
        EXPECT_EQ(row.expect, Expect::State) << "StateError where InvalidArgument was expected: " << what;
        EXPECT_NE(what.find(row.text), std::string::npos) << "'" << row.text << "' not in: " << what;
    } catch (const Error& e) {
        ADD_FAILURE() << row.id << ": wrong kestrel exception: " << e.what();
    } catch (const std::exception& e) {
        ADD_FAILURE() << row.id << ": not a kestrel exception: " << e.what();
    }
    if (row.good_needs_gpu && !cuda_available()) {
        std::cout << "[ note     ] " << row.id << ": the good-input half needs a GPU (none here)\n";
        return;
    }
    try {
        c.good();
    } catch (const std::exception& e) {
        ADD_FAILURE() << row.id << ": the good call after the bad one threw: " << e.what();
    }
}

}  // namespace kestrel::test
