// 8-bit grey images: non-owning views (host or device memory, said by the type) and the owning
// host image. Device- and pinned-memory owners live in device_image.hpp. No CUDA header needed.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "kestrel/detail/validate.hpp"

namespace kestrel {

enum class MemorySpace { Host, Device };

/// Read-only view of an 8-bit grey image: row y starts at data + y * pitch (pitch in bytes).
template <MemorySpace M>
struct ImageView {
    const std::uint8_t* data = nullptr;
    int width = 0;
    int height = 0;
    std::size_t pitch = 0;

    const std::uint8_t* row(int y) const { return data + static_cast<std::size_t>(y) * pitch; }
};

/// Writable view of an 8-bit grey image; converts to the read-only view of the same memory space.
template <MemorySpace M>
struct MutableImageView {
    std::uint8_t* data = nullptr;
    int width = 0;
    int height = 0;
    std::size_t pitch = 0;

    std::uint8_t* row(int y) const { return data + static_cast<std::size_t>(y) * pitch; }
    operator ImageView<M>() const { return {data, width, height, pitch}; }
};

using HostView = ImageView<MemorySpace::Host>;
using DeviceView = ImageView<MemorySpace::Device>;
using HostMutView = MutableImageView<MemorySpace::Host>;
using DeviceMutView = MutableImageView<MemorySpace::Device>;

/// Largest image side Kestrel accepts (keypoint keys pack coordinates into 14 bits).
constexpr int kMaxImageSide = 16383;

/// Throws InvalidArgument naming `param` unless the view is usable: non-null, sizes in
/// [1, kMaxImageSide], pitch >= width.
template <typename View>
void validate_view(const char* where, const char* param, const View& v) {
    // Strings are built only on failure: this runs on the per-frame path, which must not allocate.
    const auto name = [param](const char* field) { return std::string(param) + "." + field; };
    if (v.data == nullptr) detail::fail(where, name("data").c_str(), "must not be null");
    if (v.width < 1 || v.width > kMaxImageSide)
        detail::check_range(where, name("width").c_str(), v.width, 1, kMaxImageSide);
    if (v.height < 1 || v.height > kMaxImageSide)
        detail::check_range(where, name("height").c_str(), v.height, 1, kMaxImageSide);
    if (v.pitch < static_cast<std::size_t>(v.width))
        detail::fail(where, name("pitch").c_str(),
                     "= " + detail::to_text(v.pitch) + " must be >= width (" + detail::to_text(v.width) + ")");
}

/// Owning, tightly packed (pitch == width) 8-bit grey image in ordinary host memory.
class HostImage {
public:
    HostImage() = default;
    HostImage(int width, int height, std::uint8_t fill = 0);
    /// Deep copy of a view (any pitch) into a packed image.
    static HostImage copy_of(HostView v);

    int width() const { return width_; }
    int height() const { return height_; }
    std::size_t pitch() const { return static_cast<std::size_t>(width_); }
    bool empty() const { return pixels_.empty(); }
    std::uint8_t* data() { return pixels_.data(); }
    const std::uint8_t* data() const { return pixels_.data(); }
    std::uint8_t& at(int x, int y) { return pixels_[static_cast<std::size_t>(y) * width_ + x]; }
    std::uint8_t at(int x, int y) const { return pixels_[static_cast<std::size_t>(y) * width_ + x]; }

    HostView view() const { return {pixels_.data(), width_, height_, pitch()}; }
    HostMutView mut_view() { return {pixels_.data(), width_, height_, pitch()}; }

private:
    int width_ = 0, height_ = 0;
    std::vector<std::uint8_t> pixels_;
};

}  // namespace kestrel
