// Host-run checks of the device kernels' logic (a unit test in nvrtc.rs
// compiles host_prelude.h + lindiff.cu + this file with g++ and runs it):
// with one "thread" (blockDim = gridDim = 1) every GRID_LOOP walks all
// its work items in order. Expected values are worked out by hand in the
// comments, never by the kernels. Exit status 0 = every check passed.
#include <cstdio>

static int failures = 0;
static void check(bool ok, const char* what) {
    if (!ok) { std::printf("FAILED: %s\n", what); ++failures; }
}
static bool near(double a, double b) { return std::fabs(a - b) <= 1e-14; }
static bool near(c64 a, double re_, double im_) { return near(a.re, re_) && near(a.im, im_); }

// Real input [[0,-1],[1,0]] (times 3 in the vectors): eigenvalues +-i. LAPACK
// packs the pair as w = [0, 0 | 1, -1], VR = [a b] with v_+ = a + i b =
// (3, -3i): A v_+ = (3i, 3) = i v_+. Sorted: -i first, its vector conj(v_+)
// normalised: (1/sqrt2, i/sqrt2) (first entry already real and positive).
static void eig_real_pair() {
    double w[4] = {0, 0, 1, -1};
    double vr[4] = {3, 0, 0, -3};
    c64 wo[2], vo[4];
    eig_finish_impl<double>(wo, vo, w, vr, 2, 1);
    double h = std::sqrt(0.5);
    check(near(wo[0], 0, -1) && near(wo[1], 0, 1), "eig: conjugate pair sorted by imaginary part");
    check(near(vo[0], h, 0) && near(vo[1], 0, h), "eig: -i's vector is conj(v_+), unit norm");
    check(near(vo[2], h, 0) && near(vo[3], 0, -h), "eig: +i's vector unpacked from the pair");
}

// Real eigenvalues 3, -1, 2 with vectors e0, 2 e1, -e2: sorted -1, 2, 3 with
// vectors e1, e2 (sign flipped to +), e0.
static void eig_real_sort() {
    double w[6] = {3, -1, 2, 0, 0, 0};
    double vr[9] = {1, 0, 0, 0, 2, 0, 0, 0, -1};
    c64 wo[3], vo[9];
    eig_finish_impl<double>(wo, vo, w, vr, 3, 1);
    check(near(wo[0], -1, 0) && near(wo[1], 2, 0) && near(wo[2], 3, 0), "eig: ascending real parts");
    check(near(vo[1], 1, 0) && near(vo[0], 0, 0) && near(vo[5], 1, 0) && near(vo[6], 1, 0),
          "eig: vectors follow their values, unit norm, pivot positive");
}

// Complex input, batch of two 2x2 items. Item 0: w = (1+i, 1-i) -> sorted
// (1-i, 1+i); vectors (0, 2i) -> (0, 1) (pivot i made positive) and (1, 0).
// Item 1: w = (5, 4) -> (4, 5); 4's vector (3i, 0) -> (1, 0), 5's vector is
// zero and stays zero.
static void eig_complex() {
    c64 w[4] = {{1, 1}, {1, -1}, {5, 0}, {4, 0}};
    c64 vr[8] = {{0, 0}, {0, 2}, {1, 0}, {0, 0}, {0, 0}, {0, 0}, {0, 3}, {0, 0}};
    c64 wo[4], vo[8];
    eig_finish_impl<c64>(wo, vo, w, vr, 2, 2);
    check(near(wo[0], 1, -1) && near(wo[1], 1, 1) && near(wo[2], 4, 0) && near(wo[3], 5, 0), "eig: complex sort per item");
    check(near(vo[0], 1, 0) && near(vo[1], 0, 0) && near(vo[2], 0, 0) && near(vo[3], 1, 0), "eig: complex phase");
    check(near(vo[4], 1, 0) && near(vo[5], 0, 0) && near(vo[6], 0, 0) && near(vo[7], 0, 0), "eig: zero vector kept");
}

static void nonfinite() {
    double x[4] = {1, 2, 0, 0};
    x[3] = 1.0 / x[2];
    int flags[2] = {7, 7};
    nonfinite_flags_impl<double>(flags, x, 2, 2);
    check(flags[0] == 0 && flags[1] == 1, "nonfinite_flags: per item");
}

// 2x2 items, column-major: item 0 has inf above the diagonal (a_01), item 1
// below it (a_10), item 2 on the diagonal. Lower reads 0 and 1 -> (0, 1, 1);
// upper -> (1, 0, 1); unit lower skips the diagonal -> (0, 1, 0). herm
// zeroes the diagonal's imaginary part, off-diagonal untouched.
static void nonfinite_tri() {
    double z = 0;
    double inf = 1.0 / z;
    double x[12] = {1, 2, inf, 4, 1, inf, 3, 4, inf, 2, 3, 4};
    int f[3] = {7, 7, 7};
    nonfinite_tri_impl<double>(f, x, 2, 1, 0, 0, 3);
    check(f[0] == 0 && f[1] == 1 && f[2] == 1, "nonfinite_tri: lower");
    nonfinite_tri_impl<double>(f, x, 2, 2, 0, 0, 3);
    check(f[0] == 1 && f[1] == 0 && f[2] == 1, "nonfinite_tri: upper");
    nonfinite_tri_impl<double>(f, x, 2, 1, 1, 0, 3);
    check(f[0] == 0 && f[1] == 1 && f[2] == 0, "nonfinite_tri: unit lower skips the diagonal");
    c64 h[4] = {{1, 5}, {2, 3}, {2, -3}, {4, -1}};
    int g[1] = {7};
    nonfinite_tri_impl<c64>(g, h, 2, 1, 0, 1, 1);
    check(g[0] == 0 && h[0].im == 0 && h[3].im == 0 && h[1].im == 3 && h[2].im == -3, "nonfinite_tri: herm diagonal real");
}

// kept_rank on s = (4, 2, 1e-3) and (0, 0, 0): count 2 -> 2 and 2; count 9 ->
// 3; tolerance atol 0.5, rtol 0.1 -> threshold max(0.5, 0.4) = 0.5 -> 2; an
// all-zero spectrum keeps none (0 > 0 is false).
static void kept_rank() {
    double s[6] = {4, 2, 1e-3, 0, 0, 0};
    i64 rank[2] = {-1, -1};
    kept_rank_impl<double>(rank, s, 3, 2, 0, 2, 0, 0);
    check(rank[0] == 2 && rank[1] == 2, "kept_rank: count");
    kept_rank_impl<double>(rank, s, 3, 2, 0, 9, 0, 0);
    check(rank[0] == 3, "kept_rank: count capped at k");
    kept_rank_impl<double>(rank, s, 3, 2, 1, 0, 0.5, 0.1);
    check(rank[0] == 2 && rank[1] == 0, "kept_rank: tolerance");
}

// spectral_scale on a 2x2 of ones, s = (2, 4), rank 1: columns -> (2, 0);
// rows with 1/s -> first row 0.5, second 0; mask only -> first column 1.
static void spectral_scale() {
    double s[2] = {2, 4};
    i64 rank[1] = {1};
    double x[4] = {1, 1, 1, 1};
    spectral_scale_impl<double>(0, 0, x, 2, 2, s, 2, rank, 1);
    check(x[0] == 2 && x[1] == 2 && x[2] == 0 && x[3] == 0, "spectral_scale: columns times s");
    double y[4] = {1, 1, 1, 1};
    spectral_scale_impl<double>(1, 1, y, 2, 2, s, 2, rank, 1);
    check(y[0] == 0.5 && y[1] == 0 && y[2] == 0.5 && y[3] == 0, "spectral_scale: rows over s");
    double z[4] = {1, 1, 1, 1};
    spectral_scale_impl<double>(0, 2, z, 2, 2, s, 2, rank, 1);
    check(z[0] == 1 && z[1] == 1 && z[2] == 0 && z[3] == 0, "spectral_scale: mask only");
}

int main() {
    blockDim.x = 1;
    gridDim.x = 1;
    eig_real_pair();
    eig_real_sort();
    eig_complex();
    nonfinite();
    nonfinite_tri();
    kept_rank();
    spectral_scale();
    if (failures == 0) std::printf("all kernel checks passed\n");
    return failures == 0 ? 0 : 1;
}
