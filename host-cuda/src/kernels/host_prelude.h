// Stand-ins for the CUDA built-ins lindiff.cu uses, so a host C++ compiler
// can check the kernel source (syntax, templates, every instantiation)
// where no GPU or NVRTC is present. Used only by a unit test.
#include <cmath>
#include <cstring>
// NVRTC has none of <cmath>'s macros: hide them so the host check fails
// where NVRTC would.
#undef INFINITY
#undef NAN
#undef HUGE_VAL
#undef HUGE_VALF
#define __device__
#define __global__
struct lindiff_dim3 { unsigned x; };
static lindiff_dim3 blockIdx, threadIdx, blockDim, gridDim;
using std::exp; using std::fabs; using std::hypot; using std::log; using std::sqrt; using std::isfinite;
inline float sqrtf(float x) { return std::sqrt(x); }
inline float expf(float x) { return std::exp(x); }
inline float logf(float x) { return std::log(x); }
inline float fabsf(float x) { return std::fabs(x); }
inline float hypotf(float a, float b) { return std::hypot(a, b); }
inline float __int_as_float(int bits) { float f; std::memcpy(&f, &bits, sizeof f); return f; }
inline double __longlong_as_double(long long bits) { double d; std::memcpy(&d, &bits, sizeof d); return d; }
