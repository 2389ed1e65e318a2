// Kestrel's exception hierarchy. Every public function throws one of these; none crashes on bad input.
#pragma once
#include <stdexcept>
#include <string>

namespace kestrel {

/// Base of every exception Kestrel throws.
class Error : public std::runtime_error {
public:
    explicit Error(const std::string& what) : std::runtime_error(what) {}
};

/// A parameter is out of its documented bounds. The message names the parameter and the bound.
class InvalidArgument : public Error {
public:
    InvalidArgument(std::string parameter, const std::string& what)
        : Error(what), parameter_(std::move(parameter)) {}
    const std::string& parameter() const noexcept { return parameter_; }

private:
    std::string parameter_;
};

/// The object cannot perform the call in its present state (e.g. it was moved from).
class StateError : public Error {
public:
    explicit StateError(const std::string& what) : Error(what) {}
};

/// A CUDA runtime call or kernel launch failed. Carries the failing call, file, line and the
/// pipeline stage that issued it.
class CudaError : public Error {
public:
    CudaError(int code, std::string call, std::string file, int line, std::string stage,
              const std::string& what)
        : Error(what), code_(code), call_(std::move(call)), file_(std::move(file)), line_(line),
          stage_(std::move(stage)) {}
    int code() const noexcept { return code_; }
    const std::string& call() const noexcept { return call_; }
    const std::string& file() const noexcept { return file_; }
    int line() const noexcept { return line_; }
    const std::string& stage() const noexcept { return stage_; }

private:
    int code_;
    std::string call_, file_;
    int line_;
    std::string stage_;
};

/// No usable CUDA device is present (the CUDA backend was asked for on a machine without one).
class NoDeviceError : public Error {
public:
    explicit NoDeviceError(const std::string& what) : Error(what) {}
};

}  // namespace kestrel
