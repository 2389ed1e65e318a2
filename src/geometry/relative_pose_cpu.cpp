// The CPU reference of RelativePoseEstimator (the definition kernels/geometry/ransac.cu matches): the
// translation pass (five-point or two-point) and the rotation-only pass, each scored in rounds of cfg.batch
// with detail::pose_hypothesis and scanned in order with the adaptive stop (include/kestrel/detail/ransac_rules.hpp),
// then detail::pose_finish with the finish's sums emulated (PoseHostSum). This file is compiled with
// -ffp-contract=off (CMakeLists.txt) so that the host performs the rules' operations unfused, as the kernel
// (built with --fmad=false) does.
#include <cstring>
#include <memory>
#include <vector>

#include "kestrel/detail/ransac_rules.hpp"
#include "src/geometry/relative_pose_backend.hpp"

// The hot functions (a pass' hypotheses and scan; the finish) get a second build for x86-64 CPUs with FMA (GCC's
// function multi-versioning on the FMA feature bit, chosen once at load time): there the rules' std::fma is one
// instruction instead of a call into the C library (about 10x faster end to end). Both builds state every fused
// multiply-add and fuse nothing else (-ffp-contract=off), and fma is exactly rounded in both, so they return the
// same bits.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(KESTREL_NO_CPU_CLONES)
#define KESTREL_POSE_CPU_CLONES __attribute__((target_clones("fma", "default"), flatten))
#else
#define KESTREL_POSE_CPU_CLONES
#endif

namespace kestrel::detail {

namespace {

/// One RANSAC pass: hypotheses [0, cap) in rounds of `batch`, the in-order scan; the winner's model to M.
KESTREL_POSE_CPU_CLONES PoseScan run_pass(const PoseProblem& p, int cap, const int* table, int batch, PoseScratch& scratch,
                                          double* M) {
    PoseScan scan;
    for (int j = 0; j < 9; ++j) M[j] = 0.0;
    for (int first = 0; first < cap && !scan.stopped; first += batch) {
        const int count = first + batch <= cap ? batch : cap - first;
        for (int j = 0; j < count; ++j)
            scratch.cost[static_cast<std::size_t>(j)] =
                pose_hypothesis(p, first + j, &scratch.E[9 * static_cast<std::size_t>(j)], &scratch.inliers[static_cast<std::size_t>(j)]);
        const int won = pose_scan(scan, scratch.cost.data(), scratch.inliers.data(), first, count, table, p.n, cap);
        if (won >= 0)
            for (int j = 0; j < 9; ++j) M[j] = scratch.E[9 * static_cast<std::size_t>(won) + static_cast<std::size_t>(j)];
    }
    return scan;
}

KESTREL_POSE_CPU_CLONES void finish_cpu(const PoseFinishParams& fp, const PoseScan& se, const double* E, const PoseScan& sr,
                                        const double* R, std::uint8_t* mask, PoseRecord& rec) {
    pose_finish(PoseHostSum{}, fp, se, E, sr, R, mask, rec);
}

}  // namespace

void relative_pose_cpu(const PoseCall& call, const RelativePoseConfig& cfg, const std::vector<int>& tables,
                       std::uint8_t* mask, PoseScratch& scratch, PoseRecord& rec) {
    PoseFinishParams fp{};
    PoseProblem rot{};
    pose_setup(call, cfg, call.x1, call.x2, call.s, call.n, call.n, fp, rot);
    double E[9] = {0}, R[9] = {0};
    PoseScan se, sr;
    if (call.n >= pose_sample_size(call.method)) {
        se = run_pass(fp.pe, cfg.max_hypotheses, pose_table(tables, call.method), cfg.batch, scratch, E);
        if (cfg.rotation_only) {
            const int cap = pose_rotation_cap(se, call.n, pose_table(tables, 2), pose_rotation_max(cfg));
            sr = run_pass(rot, cap, pose_table(tables, 2), cfg.batch, scratch, R);
        }
    }
    finish_cpu(fp, se, E, sr, R, mask, rec);
}

namespace {

class CpuPoseBackend final : public PoseBackend {
public:
    CpuPoseBackend(int max_points, const RelativePoseConfig& cfg, const std::vector<int>& tables)
        : cfg_(cfg), tables_(tables), mask_(static_cast<std::size_t>(max_points)), scratch_(cfg.batch) {}
    void enqueue(const PoseCall& call, StreamHandle) override {
        n_ = call.n;
        relative_pose_cpu(call, cfg_, tables_, mask_.data(), scratch_, rec_);
    }
    RelativePoseResult finish(std::uint8_t* mask) override {
        if (mask) std::memcpy(mask, mask_.data(), static_cast<std::size_t>(n_));
        return pose_result(rec_);
    }

private:
    RelativePoseConfig cfg_;
    std::vector<int> tables_;
    std::vector<std::uint8_t> mask_;
    PoseScratch scratch_;
    PoseRecord rec_{};
    int n_ = 0;
};

}  // namespace

std::unique_ptr<PoseBackend> make_cpu_pose_backend(int max_points, const RelativePoseConfig& cfg,
                                                   const std::vector<int>& tables) {
    return std::make_unique<CpuPoseBackend>(max_points, cfg, tables);
}

}  // namespace kestrel::detail
