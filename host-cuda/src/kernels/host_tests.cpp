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

int main() {
    blockDim.x = 1;
    gridDim.x = 1;
    eig_real_pair();
    eig_real_sort();
    eig_complex();
    nonfinite();
    if (failures == 0) std::printf("all kernel checks passed\n");
    return failures == 0 ? 0 : 1;
}
