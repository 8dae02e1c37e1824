// CPU references of the example kernels (filter2d.cl, heat.cl, kmeans.cl, fdtd2d.cl and
// pathfinder's kernels.cl) with the kernels' exact float operation order, the seeded input
// generators, and comparison helpers. Shared by the
// worksize examples and the plain single-device OpenCL programs. Header-only.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <initializer_list>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace example {

/// An example's kernel file: $EXAMPLE_KERNEL_DIR/<file> when set (a copy elsewhere), else
/// <dir>/<file> (the source tree's folder, compiled in).
inline std::string kernel_path(const std::string& dir, const std::string& file) {
    const char* env = std::getenv("EXAMPLE_KERNEL_DIR");
    return (env && *env ? std::string(env) : dir) + "/" + file;
}

/// EXAMPLE_NOVERIFY=1: skip the CPU reference (sizes where it would take minutes).
inline bool skip_verify() {
    const char* env = std::getenv("EXAMPLE_NOVERIFY");
    return env && std::string(env) == "1";
}

// ---- filter2d: out(y,x) = sum_{dy,dx in [-R,R]} w[(dy+R)*(2R+1)+(dx+R)] * in(clamp y+dy, clamp x+dx)
inline std::vector<float> filter2d_reference(const std::vector<float>& in, const std::vector<float>& weights,
                                             int width, int height) {
    const int side = static_cast<int>(std::lround(std::sqrt(static_cast<double>(weights.size()))));
    const int r = side / 2;
    std::vector<float> out(in.size());
    for (int y = 0; y < height; ++y)
        for (int x = 0; x < width; ++x) {
            float acc = 0.0f;
            for (int dy = -r; dy <= r; ++dy) {
                const int yy = std::clamp(y + dy, 0, height - 1);
                for (int dx = -r; dx <= r; ++dx) {
                    const int xx = std::clamp(x + dx, 0, width - 1);
                    acc += weights[(dy + r) * side + (dx + r)] * in[std::size_t(yy) * width + xx];
                }
            }
            out[std::size_t(y) * width + x] = acc;
        }
    return out;
}

// ---- heat: `steps` explicit 5-point steps, edge-replicating borders.
inline std::vector<float> heat_reference(std::vector<float> t, const std::vector<float>& power, int width,
                                         int height, int steps, float cx, float cy, float cp) {
    std::vector<float> next(t.size());
    for (int step = 0; step < steps; ++step) {
        for (int y = 0; y < height; ++y) {
            const float* row = &t[std::size_t(y) * width];
            const float* up = &t[std::size_t(std::max(y - 1, 0)) * width];
            const float* down = &t[std::size_t(std::min(y + 1, height - 1)) * width];
            for (int x = 0; x < width; ++x) {
                const float c = row[x], n = up[x], s = down[x];
                const float w = row[std::max(x - 1, 0)], e = row[std::min(x + 1, width - 1)];
                next[std::size_t(y) * width + x] = c + cx * ((e + w) - 2.0f * c) + cy * ((n + s) - 2.0f * c) +
                                                   cp * power[std::size_t(y) * width + x];
            }
        }
        t.swap(next);
    }
    return t;
}

// ---- kmeans: sums[j*(d+1)+dd] coordinate sums, sums[j*(d+1)+d] the count (float).
struct KmeansResult {
    std::vector<float> sums;
    std::vector<int> labels;
};

/// The nearest non-empty centre of point p (the assign kernel): ties and no centre -> lowest j / 0.
inline int kmeans_nearest(const float* p, const std::vector<float>& sums, int d, int k) {
    int best = 0;
    float best_dist = 0.0f;
    bool found = false;
    for (int j = 0; j < k; ++j) {
        const float* s = &sums[std::size_t(j) * (d + 1)];
        const float count = s[d];
        if (count == 0.0f) continue;
        float dist = 0.0f;
        for (int dd = 0; dd < d; ++dd) {
            const float diff = p[dd] - s[dd] / count;
            dist += diff * diff;
        }
        if (!found || dist < best_dist) best = j, best_dist = dist, found = true;
    }
    return best;
}

/// Per-chunk float partials (points in order), combined in double in chunk order, then to float.
inline KmeansResult kmeans_reference(const std::vector<float>& points, std::vector<float> sums, int n, int d, int k,
                                     int chunk, int iterations) {
    const std::size_t rec_size = std::size_t(k) * (d + 1);
    std::vector<int> labels(n, 0);
    std::vector<float> rec(rec_size);
    std::vector<double> total(rec_size);
    for (int it = 0; it < iterations; ++it) {
        for (int i = 0; i < n; ++i) labels[i] = kmeans_nearest(&points[std::size_t(i) * d], sums, d, k);
        std::fill(total.begin(), total.end(), 0.0);
        for (int first = 0; first < n; first += chunk) {
            std::fill(rec.begin(), rec.end(), 0.0f);
            for (int i = first; i < std::min(first + chunk, n); ++i) {
                float* r = &rec[std::size_t(labels[i]) * (d + 1)];
                for (int dd = 0; dd < d; ++dd) r[dd] += points[std::size_t(i) * d + dd];
                r[d] += 1.0f;
            }
            for (std::size_t e = 0; e < rec_size; ++e) total[e] += rec[e];
        }
        for (std::size_t e = 0; e < rec_size; ++e) sums[e] = static_cast<float>(total[e]);
    }
    return {std::move(sums), std::move(labels)};
}

// ---- seeded inputs
inline std::vector<float> random_image(int width, int height, unsigned seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> u(0.0f, 1.0f);
    std::vector<float> img(std::size_t(width) * height);
    for (auto& v : img) v = u(rng);
    return img;
}

/// Normalized 5x5 Gaussian (sigma 1), row-major.
inline std::vector<float> gaussian5x5() {
    std::vector<float> w(25);
    double sum = 0.0;
    for (int dy = -2; dy <= 2; ++dy)
        for (int dx = -2; dx <= 2; ++dx) sum += std::exp(-0.5 * (dx * dx + dy * dy));
    for (int dy = -2; dy <= 2; ++dy)
        for (int dx = -2; dx <= 2; ++dx)
            w[(dy + 2) * 5 + (dx + 2)] = static_cast<float>(std::exp(-0.5 * (dx * dx + dy * dy)) / sum);
    return w;
}

struct HeatInputs {
    std::vector<float> t;      ///< initial temperature, 320-340
    std::vector<float> power;  ///< 0-1e-3 per cell
    float cx = 0.2f, cy = 0.2f, cp = 1.0f;  ///< cx + cy <= 0.5: the explicit scheme is stable
};

inline HeatInputs heat_inputs(int width, int height, unsigned seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> temp(320.0f, 340.0f), pw(0.0f, 1e-3f);
    HeatInputs h;
    h.t.resize(std::size_t(width) * height);
    h.power.resize(h.t.size());
    for (auto& v : h.t) v = temp(rng);
    for (auto& v : h.power) v = pw(rng);
    return h;
}

/// k random centres in [0,100)^d kept at least 10 apart where possible, drawn from `rng`.
inline std::vector<float> kmeans_draw_centres(std::mt19937& rng, int d, int k) {
    std::uniform_real_distribution<float> u(0.0f, 100.0f);
    std::vector<float> centres(std::size_t(k) * d);
    for (int j = 0; j < k; ++j)
        for (int attempt = 0; attempt < 1000; ++attempt) {
            for (int dd = 0; dd < d; ++dd) centres[std::size_t(j) * d + dd] = u(rng);
            bool far = true;
            for (int i = 0; i < j && far; ++i) {
                double dist2 = 0.0;
                for (int dd = 0; dd < d; ++dd) {
                    const double diff = centres[std::size_t(j) * d + dd] - centres[std::size_t(i) * d + dd];
                    dist2 += diff * diff;
                }
                far = dist2 >= 100.0;
            }
            if (far) break;
        }
    return centres;
}

/// n points (row-major n x d) drawn N(centre, 1) around k random centres in [0,100)^d that are
/// kept at least 10 apart where possible (each point's centre is drawn uniformly).
inline std::vector<float> kmeans_points(int n, int d, int k, unsigned seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> noise(0.0f, 1.0f);
    const std::vector<float> centres = kmeans_draw_centres(rng, d, k);
    std::uniform_int_distribution<int> pick(0, k - 1);
    std::vector<float> points(std::size_t(n) * d);
    for (int i = 0; i < n; ++i) {
        const int j = pick(rng);
        for (int dd = 0; dd < d; ++dd) points[std::size_t(i) * d + dd] = centres[std::size_t(j) * d + dd] + noise(rng);
    }
    return points;
}

/// Centres from sums (the host step): coordinate sums over the count, the count kept (0: empty).
inline void kmeans_centres(const std::vector<float>& sums, std::vector<float>& centres, int d, int k) {
    for (int j = 0; j < k; ++j) {
        const float* s = &sums[std::size_t(j) * (d + 1)];
        float* c = &centres[std::size_t(j) * (d + 1)];
        for (int dd = 0; dd < d; ++dd) c[dd] = s[d] == 0.0f ? 0.0f : s[dd] / s[d];
        c[d] = s[d];
    }
}

/// The k centres of kmeans_point_rows(): drawn as kmeans_points() draws its own, the same on
/// every rank.
inline std::vector<float> kmeans_seed_centres(int d, int k, unsigned seed) {
    std::mt19937 rng(seed);
    return kmeans_draw_centres(rng, d, k);
}

/// Points [first, first + count) of a set like kmeans_points()'s, each a function of its index
/// alone (any rank makes any rows, in any order, the same): point i's centre is drawn from a
/// hash of (seed, i), each coordinate's noise from a hash of (seed, i, coordinate) as the sum of
/// four uniforms (Irwin-Hall, scaled to variance 1). In threads (hardware_concurrency) when large.
inline void kmeans_point_rows(const std::vector<float>& centres, int d, int k, unsigned seed, std::uint64_t first,
                              std::uint64_t count, float* out) {
    auto mix = [](std::uint64_t z) {  // SplitMix64's finaliser
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        return z ^ (z >> 31);
    };
    auto rows = [&](std::uint64_t from, std::uint64_t to) {
        for (std::uint64_t i = from; i < to; ++i) {
            const std::uint64_t p = first + i, h = mix(mix(seed) + (p + 1) * 0x9e3779b97f4a7c15ULL);
            const std::size_t j = std::size_t(h % std::uint64_t(k));
            for (int dd = 0; dd < d; ++dd) {
                const std::uint64_t z = mix(h + std::uint64_t(dd + 1) * 0xd1b54a32d192ed03ULL);
                const double s = double(z & 0xffff) + double((z >> 16) & 0xffff) + double((z >> 32) & 0xffff) +
                                 double(z >> 48);
                const double noise = (s / 65536.0 - 2.0) * 1.7320508075688772;  // four U(0,1): mean 2, variance 1/3
                out[i * std::uint64_t(d) + std::uint64_t(dd)] = centres[j * std::size_t(d) + std::size_t(dd)] + float(noise);
            }
        }
    };
    const std::uint64_t threads = count < (1u << 16) ? 1 : std::max(1u, std::thread::hardware_concurrency());
    std::vector<std::thread> pool;
    const std::uint64_t per = (count + threads - 1) / threads;
    for (std::uint64_t t = 1; t < threads && t * per < count; ++t)
        pool.emplace_back(rows, t * per, std::min(count, (t + 1) * per));
    rows(0, std::min(count, per));
    for (auto& th : pool) th.join();
}

/// The first k points as the initial centres, each with count 1.
inline std::vector<float> kmeans_initial_sums(const std::vector<float>& points, int d, int k) {
    std::vector<float> sums(std::size_t(k) * (d + 1));
    for (int j = 0; j < k; ++j) {
        for (int dd = 0; dd < d; ++dd) sums[std::size_t(j) * (d + 1) + dd] = points[std::size_t(j) * d + dd];
        sums[std::size_t(j) * (d + 1) + d] = 1.0f;
    }
    return sums;
}

// ---- fdtd-2d (PolyBench-ACC's OpenCL fdtd-2d: init_arrays and runFdtd, in float with the
// kernels' double arithmetic)
struct FdtdArrays {
    std::vector<float> fict, ex, ey, hz;  ///< fict: tmax; the others nx rows of ny
};

inline FdtdArrays fdtd_inputs(int tmax, int nx, int ny) {
    FdtdArrays a;
    a.fict.resize(std::size_t(tmax));
    for (int t = 0; t < tmax; ++t) a.fict[std::size_t(t)] = float(t);
    const std::size_t cells = std::size_t(nx) * std::size_t(ny);
    a.ex.resize(cells), a.ey.resize(cells), a.hz.resize(cells);
    for (int i = 0; i < nx; ++i)
        for (int j = 0; j < ny; ++j) {
            const std::size_t c = std::size_t(i) * std::size_t(ny) + std::size_t(j);
            a.ex[c] = (float(i) * float(j + 1) + 1) / float(nx);
            a.ey[c] = (float(i - 1) * float(j + 2) + 2) / float(nx);
            a.hz[c] = (float(i - 9) * float(j + 4) + 3) / float(nx);
        }
    return a;
}

inline FdtdArrays fdtd_reference(FdtdArrays a, int tmax, int nx, int ny) {
    auto at = [ny](int i, int j) { return std::size_t(i) * std::size_t(ny) + std::size_t(j); };
    for (int t = 0; t < tmax; ++t) {
        for (int j = 0; j < ny; ++j) a.ey[at(0, j)] = a.fict[std::size_t(t)];
        for (int i = 1; i < nx; ++i)
            for (int j = 0; j < ny; ++j)
                a.ey[at(i, j)] = float(a.ey[at(i, j)] - 0.5 * (a.hz[at(i, j)] - a.hz[at(i - 1, j)]));
        for (int i = 0; i < nx; ++i)
            for (int j = 1; j < ny; ++j)
                a.ex[at(i, j)] = float(a.ex[at(i, j)] - 0.5 * (a.hz[at(i, j)] - a.hz[at(i, j - 1)]));
        for (int i = 0; i < nx - 1; ++i)
            for (int j = 0; j < ny - 1; ++j)
                a.hz[at(i, j)] = float(a.hz[at(i, j)] - 0.7 * (a.ex[at(i, j + 1)] - a.ex[at(i, j)] +
                                                               a.ey[at(i + 1, j)] - a.ey[at(i, j)]));
    }
    return a;
}

// ---- pathfinder (Rodinia's OpenCL pathfinder: a wall of `rows` rows of `cols` weights 0..9;
// row 0 starts the sums, each next row adds its weight to the least of the three sums above)
/// The weight of cell `i` (row-major) of the wall: a hash of its index (splitmix64's finaliser),
/// not a sequential generator, so that any part of a wall of billions of cells is made on its own
/// (each rank its part: the pathfinder example's generator) in a second or two.
inline int pathfinder_weight(std::uint64_t i, unsigned seed) {
    std::uint64_t z = (i + 1) * 0x9E3779B97F4A7C15ull + seed;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return int((z ^ (z >> 31)) % 10);
}

inline std::vector<int> pathfinder_wall(int rows, int cols, unsigned seed) {
    std::vector<int> wall(std::size_t(rows) * std::size_t(cols));
    for (std::size_t i = 0; i < wall.size(); ++i) wall[i] = pathfinder_weight(i, seed);
    return wall;
}

inline std::vector<int> pathfinder_reference(const std::vector<int>& wall, int rows, int cols) {
    std::vector<int> src(wall.begin(), wall.begin() + cols), dst(static_cast<std::size_t>(cols));
    for (int t = 1; t < rows; ++t) {
        const int* w = wall.data() + std::size_t(t) * std::size_t(cols);
        for (int c = 0; c < cols; ++c) {
            int m = src[std::size_t(c)];
            if (c > 0) m = std::min(m, src[std::size_t(c - 1)]);
            if (c + 1 < cols) m = std::min(m, src[std::size_t(c + 1)]);
            dst[std::size_t(c)] = m + w[c];
        }
        src.swap(dst);
    }
    return src;
}

// ---- srad (Rodinia's OpenCL srad: speckle-reducing anisotropic diffusion of an Nr x Nc image,
// column-major, element i = row + Nr * col; the whole image is the region of interest)
/// The image's element `i` (column-major): grey levels 0..255 from a hash of its index, so that
/// any columns of it are made on their own (Rodinia reads a 502 x 458 PGM and resizes it).
inline float srad_pixel(std::uint64_t i, unsigned seed) { return float(pathfinder_weight(i, seed) * 25 + 3); }

inline std::vector<float> srad_image(int nr, int nc, unsigned seed) {
    std::vector<float> image(std::size_t(nr) * std::size_t(nc));
    for (std::size_t i = 0; i < image.size(); ++i) image[i] = srad_pixel(i, seed);
    return image;
}

/// q0sqr of an iteration (Rodinia's host): the image's mean and variance, the sums in double.
inline float srad_q0sqr(double total, double total2, double ne) {
    const float mean = float(total / ne), mean2 = mean * mean;
    const float var = float(total2 / ne) - mean2;
    return var / mean2;
}

/// Rodinia's srad as its kernels compute it, serially: extract, `niter` iterations of the
/// reduction, srad and srad2, then compress.
inline std::vector<float> srad_reference(std::vector<float> img, int nr, int nc, int niter, float lambda) {
    const std::size_t ne = img.size();
    for (auto& v : img) v = std::exp(v / 255);
    std::vector<float> dn(ne), ds(ne), dw(ne), de(ne), c(ne);
    auto at = [&](int r, int col) { return std::size_t(r) + std::size_t(nr) * std::size_t(col); };
    for (int it = 0; it < niter; ++it) {
        double total = 0, total2 = 0;
        for (float v : img) total += v, total2 += double(v) * v;
        const float q0sqr = srad_q0sqr(total, total2, double(ne));
        for (int col = 0; col < nc; ++col)
            for (int r = 0; r < nr; ++r) {
                const std::size_t e = at(r, col);
                const float jc = img[e];
                dn[e] = img[at(std::max(r - 1, 0), col)] - jc;
                ds[e] = img[at(std::min(r + 1, nr - 1), col)] - jc;
                dw[e] = img[at(r, std::max(col - 1, 0))] - jc;
                de[e] = img[at(r, std::min(col + 1, nc - 1))] - jc;
                const float g2 = (dn[e] * dn[e] + ds[e] * ds[e] + dw[e] * dw[e] + de[e] * de[e]) / (jc * jc);
                const float l = (dn[e] + ds[e] + dw[e] + de[e]) / jc;
                // (the kernel's literals are doubles: those products are computed in double)
                const float num = float((0.5 * g2) - ((1.0 / 16.0) * (l * l)));
                float den = float(1 + (0.25 * l));
                const float qsqr = num / (den * den);
                den = (qsqr - q0sqr) / (q0sqr * (1 + q0sqr));
                c[e] = std::clamp(float(1.0 / (1.0 + den)), 0.0f, 1.0f);
            }
        for (int col = 0; col < nc; ++col)
            for (int r = 0; r < nr; ++r) {
                const std::size_t e = at(r, col);
                const float d = c[e] * dn[e] + c[at(std::min(r + 1, nr - 1), col)] * ds[e] + c[e] * dw[e] +
                                c[at(r, std::min(col + 1, nc - 1))] * de[e];
                img[e] = float(img[e] + 0.25 * lambda * d);
            }
    }
    for (auto& v : img) v = std::log(v) * 255;
    return img;
}

// ---- comparison
struct Check {
    bool ok;
    std::string detail;
};

/// Max |got - want| / max(1, |want|) against rel_tol; NaN or a size mismatch fails.
inline Check compare(const std::vector<float>& got, const std::vector<float>& want, double rel_tol) {
    if (got.size() != want.size())
        return {false, "size " + std::to_string(got.size()) + " != " + std::to_string(want.size())};
    double worst = got.empty() ? 0.0 : -1.0;
    std::size_t at = 0;
    for (std::size_t i = 0; i < got.size(); ++i) {
        double err = std::abs(double(got[i]) - want[i]) / std::max(1.0, std::abs(double(want[i])));
        if (std::isnan(err)) err = INFINITY;
        if (err > worst) worst = err, at = i;
    }
    std::ostringstream s;
    s.precision(9);
    s << "max rel error " << worst << " at " << at;
    if (!got.empty()) s << " (got " << got[at] << ", want " << want[at] << ")";
    return {worst <= rel_tol, s.str()};
}

/// At most max_mismatch_fraction of the labels may differ; detail names the first mismatch.
inline Check compare_labels(const std::vector<int>& got, const std::vector<int>& want, double max_mismatch_fraction,
                            const std::string& what = "labels") {
    if (got.size() != want.size())
        return {false, "size " + std::to_string(got.size()) + " != " + std::to_string(want.size())};
    std::size_t bad = 0, first = 0;
    for (std::size_t i = 0; i < got.size(); ++i)
        if (got[i] != want[i] && bad++ == 0) first = i;
    std::string detail = std::to_string(bad) + " of " + std::to_string(got.size()) + " " + what + " differ";
    if (bad) detail += " (first at " + std::to_string(first) + ": got " + std::to_string(got[first]) + ", want " +
                       std::to_string(want[first]) + ")";
    return {double(bad) <= max_mismatch_fraction * double(got.size()), detail};
}

/// compare() of each named field in turn: the first that fails, else the last's detail.
struct Field {
    const char* name;
    const std::vector<float>& got;
    const std::vector<float>& want;
};
inline Check compare_fields(std::initializer_list<Field> fields, double rel_tol) {
    Check c{true, ""};
    for (const Field& f : fields) {
        c = compare(f.got, f.want, rel_tol);
        c.detail = std::string(f.name) + ": " + c.detail;
        if (!c.ok) break;
    }
    return c;
}

/// The checks of a run of the group-reduction k-means (whose float sums depend on the split, so
/// they are checked against what the run itself did): every label is the nearest of the centres
/// its last iteration read (`last_centres`, exact: the same float arithmetic), and the sums are
/// the points' sums by those labels (in double, within rel_tol).
struct KmeansCheck {
    Check labels, sums;
};
inline KmeansCheck kmeans_check(const std::vector<float>& points, const std::vector<float>& last_centres,
                                const std::vector<int>& labels, const std::vector<float>& sums, int n, int d, int k,
                                double rel_tol) {
    std::vector<int> want(static_cast<std::size_t>(n));
    std::vector<float> as_sums(last_centres);  // kmeans_nearest reads sums / count: centres with count 1
    for (int j = 0; j < k; ++j) as_sums[std::size_t(j) * (d + 1) + d] = last_centres[std::size_t(j) * (d + 1) + d] == 0.0f ? 0.0f : 1.0f;
    for (int i = 0; i < n; ++i) want[std::size_t(i)] = kmeans_nearest(&points[std::size_t(i) * d], as_sums, d, k);
    std::vector<double> total(std::size_t(k) * (d + 1), 0.0);
    for (int i = 0; i < n; ++i) {
        const int j = std::clamp(labels[std::size_t(i)], 0, k - 1);
        for (int dd = 0; dd < d; ++dd) total[std::size_t(j) * (d + 1) + dd] += points[std::size_t(i) * d + dd];
        total[std::size_t(j) * (d + 1) + d] += 1.0;
    }
    std::vector<float> want_sums(total.size());
    for (std::size_t e = 0; e < total.size(); ++e) want_sums[e] = static_cast<float>(total[e]);
    return {compare_labels(labels, want, 0.0), compare(sums, want_sums, rel_tol)};
}

}  // namespace example
