// lindiff-cuda's device kernels: one source, templated per dtype, compiled
// once per process by NVRTC (see nvrtc.rs). Every kernel reads strided
// inputs through a View (offset + one stride per walked dim, 0 to broadcast)
// and writes a contiguous column-major output, as host-cpu's strided walks
// do. Semantics mirror host-cpu's primitives bit for bit where the
// arithmetic allows (same operation order; device libm may differ in the
// last ulp for sqrt/exp/log/hypot).

typedef long long i64;
#define MAX_RANK 8

struct Walk { i64 rank; i64 dims[MAX_RANK]; i64 count; };
struct View { i64 offset; i64 strides[MAX_RANK]; };

template <class R> struct cx { R re; R im; };
typedef cx<float> c32;
typedef cx<double> c64;

template <class T> struct real_of { typedef T type; };
template <class R> struct real_of<cx<R> > { typedef R type; };

__device__ inline float re(float x) { return x; }
__device__ inline double re(double x) { return x; }
template <class R> __device__ inline R re(cx<R> x) { return x.re; }
__device__ inline float im(float) { return 0.0f; }
__device__ inline double im(double) { return 0.0; }
template <class R> __device__ inline R im(cx<R> x) { return x.im; }

template <class T> struct make;
template <> struct make<float> { __device__ static float of(float r, float) { return r; } };
template <> struct make<double> { __device__ static double of(double r, double) { return r; } };
template <class R> struct make<cx<R> > { __device__ static cx<R> of(R r, R i) { cx<R> z; z.re = r; z.im = i; return z; } };
template <class T> __device__ inline T from_parts(typename real_of<T>::type r, typename real_of<T>::type i) { return make<T>::of(r, i); }
template <class T> __device__ inline T zero() { return from_parts<T>(0, 0); }
template <class T> __device__ inline T one() { return from_parts<T>(1, 0); }
// +infinity from its bit pattern: NVRTC has no INFINITY macro (no <cmath>).
template <class R> struct inf_bits;
template <> struct inf_bits<float> { __device__ static float value() { return __int_as_float(0x7f800000); } };
template <> struct inf_bits<double> { __device__ static double value() { return __longlong_as_double(0x7ff0000000000000LL); } };
template <class R> __device__ inline R infinity() { return inf_bits<R>::value(); }

template <class R> __device__ inline cx<R> operator+(cx<R> a, cx<R> b) { return make<cx<R> >::of(a.re + b.re, a.im + b.im); }
template <class R> __device__ inline cx<R> operator-(cx<R> a, cx<R> b) { return make<cx<R> >::of(a.re - b.re, a.im - b.im); }
template <class R> __device__ inline cx<R> operator-(cx<R> a) { return make<cx<R> >::of(-a.re, -a.im); }
template <class R> __device__ inline cx<R> operator*(cx<R> a, cx<R> b) {
    return make<cx<R> >::of(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re);
}
// num-complex's division: (a * conj(b)) / |b|^2.
template <class R> __device__ inline cx<R> operator/(cx<R> a, cx<R> b) {
    R n = b.re * b.re + b.im * b.im;
    return make<cx<R> >::of((a.re * b.re + a.im * b.im) / n, (a.im * b.re - a.re * b.im) / n);
}

__device__ inline float conj_of(float x) { return x; }
__device__ inline double conj_of(double x) { return x; }
template <class R> __device__ inline cx<R> conj_of(cx<R> x) { return make<cx<R> >::of(x.re, -x.im); }
__device__ inline float scale_by(float x, float f) { return x * f; }
__device__ inline double scale_by(double x, double f) { return x * f; }
template <class R> __device__ inline cx<R> scale_by(cx<R> x, R f) { return make<cx<R> >::of(x.re * f, x.im * f); }
__device__ inline float abs_of(float x) { return fabsf(x); }
__device__ inline double abs_of(double x) { return fabs(x); }
__device__ inline float abs_of(c32 x) { return hypotf(x.re, x.im); }
__device__ inline double abs_of(c64 x) { return hypot(x.re, x.im); }
template <class T> __device__ inline typename real_of<T>::type abs2_of(T x) { return re(x) * re(x) + im(x) * im(x); }
__device__ inline float hypot_of(float a, float b) { return hypotf(a, b); }
__device__ inline double hypot_of(double a, double b) { return hypot(a, b); }
__device__ inline float sqrt_of(float x) { return sqrtf(x); }
__device__ inline double sqrt_of(double x) { return sqrt(x); }
// core's principal complex square root (scalar.rs), same steps.
template <class R> __device__ inline cx<R> sqrt_of(cx<R> z) {
    if (z.re == R(0) && z.im == R(0)) return zero<cx<R> >();
    R t = sqrt_of((abs_of(z) + abs_of(z.re)) * R(0.5));
    if (z.re >= R(0)) return make<cx<R> >::of(t, z.im / (t + t));
    return make<cx<R> >::of(abs_of(z.im) / (t + t), z.im < R(0) ? -t : t);
}
__device__ inline float exp_of(float x) { return expf(x); }
__device__ inline double exp_of(double x) { return exp(x); }
__device__ inline float log_of(float x) { return logf(x); }
__device__ inline double log_of(double x) { return log(x); }

// Element offset of linear output index `e` in `v`, walking `w`'s dims;
// also reports the matrix row and column (dims 0 and 1).
__device__ inline i64 locate(const Walk& w, const View& v, i64 e, i64* row, i64* col) {
    i64 off = v.offset;
    *row = 0;
    *col = 0;
    for (int d = 0; d < w.rank; ++d) {
        i64 n = w.dims[d];
        i64 i = e % n;
        e /= n;
        if (d == 0) *row = i;
        if (d == 1) *col = i;
        off += i * v.strides[d];
    }
    return off;
}

#define GRID_LOOP(i, n) for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < (n); i += (i64)blockDim.x * gridDim.x)

// ---- one-input maps ------------------------------------------------------
// code: 0 copy, 1 neg, 2 conj, 3 real, 4 imag, 5 to_complex, 6 mul_i,
// 7 abs, 8 abs2, 9 sqrt, 10 recip, 11 exp, 12 log, 13 nonzero_mask,
// 14 scale(p0), 15 tri_mask lower(p0 = diagonal factor), 16 tri_mask upper,
// 19 unit lower (strictly lower x, diagonal 1, upper 0: LU's L),
// 17 diag_embed (x at row == col, else 0), 18 pad (p_i: r0, c0, rows, cols;
// the view is the input's batch offset, strides[0..1] its matrix strides).
template <class T, class U>
__device__ void map_impl(int code, U* y, const T* x, Walk w, View v, double p0, i64 r0, i64 c0, i64 rows, i64 cols) {
    typedef typename real_of<U>::type UR;
    GRID_LOOP(e, w.count) {
        i64 row, col;
        i64 off = locate(w, v, e, &row, &col);
        if (code == 18) {
            // The view walks the input's matrix strides from its batch
            // offset; read entry (row - r0, col - c0) when inside.
            bool inside = row >= r0 && row < r0 + rows && col >= c0 && col < c0 + cols;
            if (inside) {
                T a = x[off - (r0 * v.strides[0] + c0 * v.strides[1])];
                y[e] = from_parts<U>((UR)re(a), (UR)im(a));
            } else {
                y[e] = zero<U>();
            }
            continue;
        }
        if (code == 17) {
            y[e] = row == col ? from_parts<U>((UR)re(x[off]), (UR)im(x[off])) : zero<U>();
            continue;
        }
        T a = x[off];
        UR ar = (UR)re(a), ai = (UR)im(a);
        switch (code) {
            case 0: y[e] = from_parts<U>(ar, ai); break;
            case 1: y[e] = from_parts<U>(-ar, -ai); break;
            case 2: y[e] = from_parts<U>(ar, -ai); break;
            case 3: y[e] = from_parts<U>(ar, 0); break;
            case 4: y[e] = from_parts<U>(ai, 0); break;
            case 5: y[e] = from_parts<U>(ar, ai); break;
            case 6: y[e] = from_parts<U>(-ai, ar); break;
            case 7: y[e] = from_parts<U>((UR)abs_of(a), 0); break;
            case 8: y[e] = from_parts<U>((UR)abs2_of(a), 0); break;
            case 9: { T s = sqrt_of(a); y[e] = from_parts<U>((UR)re(s), (UR)im(s)); } break;
            case 10: { T r = one<T>() / a; y[e] = from_parts<U>((UR)re(r), (UR)im(r)); } break;
            case 11: y[e] = from_parts<U>((UR)exp_of(re(a)), 0); break;
            case 12: y[e] = from_parts<U>((UR)log_of(re(a)), 0); break;
            case 13: y[e] = from_parts<U>((ar == UR(0) && ai == UR(0)) ? UR(0) : UR(1), 0); break;
            case 14: y[e] = from_parts<U>(ar * (UR)p0, ai * (UR)p0); break;
            case 15:
            case 16: {
                bool inside = code == 15 ? row > col : row < col;
                if (inside) y[e] = from_parts<U>(ar, ai);
                else if (row == col && p0 != 0.0) y[e] = from_parts<U>(ar * (UR)p0, ai * (UR)p0);
                else y[e] = zero<U>();
            } break;
            case 19: y[e] = row > col ? from_parts<U>(ar, ai) : (row == col ? one<U>() : zero<U>()); break;
            default: y[e] = zero<U>();
        }
    }
}

// ---- two-input maps ------------------------------------------------------
// code: 0 add, 1 sub, 2 mul, 3 div (same dtype), 4 mul by a real factor
// (scale_cols/scale_rows with a real vector: V is T's real type).
template <class T> __device__ inline T zip_apply(int code, T x, T y) {
    switch (code) {
        case 0: return x + y;
        case 1: return x - y;
        case 2: return x * y;
        default: return x / y;
    }
}
template <class R> __device__ inline cx<R> zip_apply(int, cx<R> x, R y) { return scale_by(x, y); }

template <class T, class V>
__device__ void zip_impl(int code, T* z, const T* a, const V* b, Walk w, View va, View vb) {
    GRID_LOOP(e, w.count) {
        i64 row, col;
        T x = a[locate(w, va, e, &row, &col)];
        V y = b[locate(w, vb, e, &row, &col)];
        z[e] = zip_apply(code, x, y);
    }
}
// ---- constants -----------------------------------------------------------
template <class T> __device__ void fill_impl(T* y, i64 n, double value) {
    typedef typename real_of<T>::type R;
    GRID_LOOP(e, n) y[e] = from_parts<T>((R)value, 0);
}
template <class T> __device__ void eye_impl(T* y, i64 n, i64 k) {
    GRID_LOOP(e, n) {
        i64 inner = e % (k * k);
        y[e] = (inner % k == inner / k) ? one<T>() : zero<T>();
    }
}
// rank_mask: y[i, b] = 1 for i < rank[b], else 0 (one thread per entry).
template <class T> __device__ void rank_mask_impl(T* y, const i64* rank, Walk items, View v, i64 k) {
    GRID_LOOP(e, items.count * k) {
        i64 b = e / k, i = e % k, row, col;
        i64 r = rank[locate(items, v, b, &row, &col)];
        y[e] = (r > 0 && i < r) ? one<T>() : zero<T>();
    }
}

// ---- reductions (one thread per batch item, sequential like host-cpu) ----
// code: 0 sum, 1 max (NaN wins), 2 min (NaN wins). `core` walks the core
// dims from each item's offset.
template <class T> __device__ void reduce_impl(int code, T* y, const T* x, Walk items, View vi, Walk core, View vc) {
    typedef typename real_of<T>::type R;
    GRID_LOOP(b, items.count) {
        i64 row, col;
        i64 base = locate(items, vi, b, &row, &col);
        View v = vc;
        v.offset = base;
        if (code == 0) {
            T acc = zero<T>();
            for (i64 e = 0; e < core.count; ++e) acc = acc + x[locate(core, v, e, &row, &col)];
            y[b] = acc;
        } else {
            R acc = code == 1 ? -infinity<R>() : infinity<R>();
            for (i64 e = 0; e < core.count; ++e) {
                R val = re(x[locate(core, v, e, &row, &col)]);
                bool nan = val != val;
                if ((code == 1 ? val > acc : val < acc) || nan) acc = val;
            }
            y[b] = from_parts<T>(acc, 0);
        }
    }
}

// ---- spectral helpers ------------------------------------------------------
// pair_inv: y[i, j] for each item; pair 0 = diff (x_j - x_i, 0 on the
// diagonal), 1 = sum; reg 0 = cutoff (p = relative), 1 = Lorentzian (p = eps).
template <class T> __device__ void pair_inv_impl(int pair, int reg, double p, T* y, const T* x, Walk items, View vi, i64 s0, i64 k) {
    typedef typename real_of<T>::type R;
    GRID_LOOP(e, items.count * k * k) {
        i64 b = e / (k * k), inner = e % (k * k), i = inner % k, j = inner / k, row, col;
        i64 base = locate(items, vi, b, &row, &col);
        if (pair == 0 && i == j) { y[e] = zero<T>(); continue; }
        T z = pair == 0 ? x[base + j * s0] - x[base + i * s0] : x[base + i * s0] + x[base + j * s0];
        if (reg == 0) {
            R largest = 0;
            for (i64 t = 0; t < k; ++t) {
                R a = abs_of(x[base + t * s0]);
                largest = a > largest ? a : largest;
            }
            R delta = largest * (R)p;
            y[e] = abs_of(z) > delta ? one<T>() / z : zero<T>();
        } else {
            R eps = (R)p;
            y[e] = scale_by(conj_of(z), R(1) / (abs2_of(z) + eps * eps));
        }
    }
}
// pivot_phase: 1/u at each column's first largest-magnitude entry, else 0.
template <class T> __device__ void pivot_phase_impl(T* y, const T* u, Walk cols, View vc, i64 s0, i64 m) {
    typedef typename real_of<T>::type R;
    GRID_LOOP(c, cols.count) {
        i64 row, col;
        i64 base = locate(cols, vc, c, &row, &col);
        i64 pivot = -1;
        R best = 0;
        for (i64 i = 0; i < m; ++i) {
            R mag = abs_of(u[base + i * s0]);
            if (mag > best) { best = mag; pivot = i; }
        }
        for (i64 i = 0; i < m; ++i) y[c * m + i] = i == pivot ? one<T>() / u[base + i * s0] : zero<T>();
    }
}

// ---- factorization post-processing (contiguous column-major buffers) ----
// The canonical phase of host-cpu's gauge.rs: column j of U (mxucols,
// item stride su) is scaled by c = conj(p)/|p|, p its first
// largest-magnitude entry (c = 1 for a zero column); column j < k of V
// (nxvcols, item stride sv) by the same c; columns k.. of V by their own.
template <class T> __device__ inline T column_phase(const T* m, i64 rows) {
    typedef typename real_of<T>::type R;
    R best = 0;
    T pivot = zero<T>();
    for (i64 i = 0; i < rows; ++i) {
        R mag = abs_of(m[i]);
        if (mag > best) { best = mag; pivot = m[i]; }
    }
    return best == R(0) ? one<T>() : scale_by(conj_of(pivot), R(1) / best);
}
template <class T> __device__ void canonical_pairs_impl(T* u, i64 m, i64 ucols, i64 su, T* v, i64 n, i64 vcols, i64 sv, i64 k, i64 batch) {
    i64 width = ucols > vcols ? ucols : vcols;
    GRID_LOOP(e, batch * width) {
        i64 b = e / width, j = e % width;
        T* ub = u + b * su;
        T* vb = v ? v + b * sv : 0;
        if (j < ucols) {
            T c = column_phase(ub + j * m, m);
            for (i64 i = 0; i < m; ++i) ub[j * m + i] = ub[j * m + i] * c;
            if (vb && j < k && j < vcols)
                for (i64 i = 0; i < n; ++i) vb[j * n + i] = vb[j * n + i] * c;
        }
        if (vb && j >= k && j < vcols) {
            T c = column_phase(vb + j * n, n);
            for (i64 i = 0; i < n; ++i) vb[j * n + i] = vb[j * n + i] * c;
        }
    }
}
// QR: makes diag(R) real and >= 0. R is kxn (item stride sr, leading dim
// ldr), Q is mxqcols (item stride sq); for d = r_jj, c = conj(d)/|d|
// (1 when d = 0) scales row j of R and column j of Q by conj(c).
template <class T> __device__ void qr_sign_impl(T* q, i64 m, i64 qcols, i64 sq, T* r, i64 ldr, i64 n, i64 sr, i64 k, i64 batch) {
    typedef typename real_of<T>::type R;
    GRID_LOOP(e, batch * k) {
        i64 b = e / k, j = e % k;
        T* rb = r + b * sr;
        T d = rb[j + j * ldr];
        R mag = abs_of(d);
        T c = mag == R(0) ? one<T>() : scale_by(conj_of(d), R(1) / mag);
        for (i64 col = j; col < n; ++col) rb[j + col * ldr] = rb[j + col * ldr] * c;
        if (mag != R(0)) rb[j + j * ldr] = from_parts<T>(mag, 0);
        if (q && j < qcols) {
            T cc = conj_of(c);
            T* qb = q + b * sq;
            for (i64 i = 0; i < m; ++i) qb[j * m + i] = qb[j * m + i] * cc;
        }
    }
}
// LAPACK's 1-based ipiv swaps (k per item) -> perm with (P A)[i,:] = A[perm[i],:].
__device__ void ipiv_to_perm_impl(i64* perm, const i64* ipiv, i64 m, i64 k, i64 batch) {
    GRID_LOOP(b, batch) {
        i64* p = perm + b * m;
        const i64* s = ipiv + b * k;
        for (i64 i = 0; i < m; ++i) p[i] = i;
        for (i64 i = 0; i < k; ++i) {
            i64 j = s[i] - 1;
            i64 t = p[i]; p[i] = p[j]; p[j] = t;
        }
    }
}
// det / slogdet from packed LU factors (nxn, item stride n*n) and ipiv:
// mode 0 -> det[b]; mode 1 -> sign[b], logabsdet[b] (real dtype R). A zero
// pivot gives det 0, sign 0, logabsdet -inf.
template <class T> __device__ void lu_det_impl(int mode, T* det_or_sign, typename real_of<T>::type* logabs, const T* lu, const i64* ipiv, i64 n, i64 batch) {
    typedef typename real_of<T>::type R;
    GRID_LOOP(b, batch) {
        const T* a = lu + b * n * n;
        const i64* s = ipiv + b * n;
        bool odd = false;
        for (i64 i = 0; i < n; ++i) odd ^= (s[i] - 1 != i);
        if (mode == 0) {
            T d = odd ? from_parts<T>(-1, 0) : one<T>();
            for (i64 i = 0; i < n; ++i) d = d * a[i + i * n];
            if (det_or_sign) det_or_sign[b] = d;
        } else {
            T sign = odd ? from_parts<T>(-1, 0) : one<T>();
            R logabs_sum = 0;
            bool singular = false;
            for (i64 i = 0; i < n; ++i) {
                T d = a[i + i * n];
                R mag = abs_of(d);
                if (mag == R(0)) { singular = true; break; }
                sign = sign * scale_by(d, R(1) / mag);
                logabs_sum += log_of(mag);
            }
            // Either output may be absent (null): slogdet's sign or logabs alone.
            if (det_or_sign) det_or_sign[b] = singular ? zero<T>() : sign;
            if (logabs) logabs[b] = singular ? -infinity<R>() : logabs_sum;
        }
    }
}
// Row permutation of contiguous nxr blocks (item stride n*r): mode 0
// gathers y[i, :] = x[perm[i], :], mode 1 scatters y[perm[i], :] = x[i, :].
template <class T> __device__ void permute_rows_impl(int mode, T* y, const T* x, const i64* perm, i64 n, i64 r, i64 batch) {
    GRID_LOOP(e, batch * n * r) {
        i64 b = e / (n * r), inner = e % (n * r), i = inner % n, c = inner / n;
        i64 p = perm[b * n + i];
        i64 base = b * n * r + c * n;
        if (mode == 0) y[base + i] = x[base + p];
        else y[base + p] = x[base + i];
    }
}
// Lowest batch index with info != 0 (info[b] > 0 for a numerical failure),
// or -1: written to out[0]. One thread walks the (small) info array.
__device__ void first_failure_impl(i64* out, const int* info, i64 batch) {
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        i64 first = -1;
        for (i64 b = 0; b < batch; ++b) if (info[b] != 0) { first = b; break; }
        out[0] = first;
    }
}

// ---- finiteness ------------------------------------------------------------
// flags[b] = 1 when item b (per_item contiguous entries, item stride
// per_item) holds a NaN or an infinity, else 0: one thread per item.
__device__ inline bool finite_of(float x) { return isfinite(x); }
__device__ inline bool finite_of(double x) { return isfinite(x); }
template <class R> __device__ inline bool finite_of(cx<R> x) { return finite_of(x.re) && finite_of(x.im); }
template <class T> __device__ void nonfinite_flags_impl(int* flags, const T* x, i64 per_item, i64 batch) {
    GRID_LOOP(b, batch) {
        int bad = 0;
        for (i64 e = 0; e < per_item; ++e) if (!finite_of(x[b * per_item + e])) { bad = 1; break; }
        flags[b] = bad;
    }
}

// Flags (flags[b] = 1) the items of the contiguous batch of n x n matrices
// at x with NaN or infinity in the part a routine reads: part 1 the lower
// triangle, 2 the upper one, the diagonal left out when unit. herm = 1
// first zeroes the imaginary part of the diagonal in place (a Hermitian
// matrix's convention, docs/ad-rules.md#conventions), which a real dtype ignores.
template <class T> __device__ void nonfinite_tri_impl(int* flags, T* x, i64 n, int part, int unit, int herm, i64 batch) {
    GRID_LOOP(b, batch) {
        T* a = x + b * n * n;
        int bad = 0;
        for (i64 j = 0; j < n; ++j) {
            if (herm) a[j + j * n] = from_parts<T>(re(a[j + j * n]), 0);
            i64 lo = part == 1 ? (unit ? j + 1 : j) : 0;
            i64 hi = part == 1 ? n : (unit ? j : j + 1);
            for (i64 i = lo; i < hi && !bad; ++i) if (!finite_of(a[i + j * n])) bad = 1;
        }
        flags[b] = bad;
    }
}

// ---- eig: cusolverDnXgeev's output in host-cpu's conventions -----------------
// Real input: w holds [re(0..n) | im(0..n)] per item (item stride 2n) and
// vr the LAPACK-packed real eigenvectors (a conjugate pair j, j+1 with
// im_j > 0: v_j = vr_j + i vr_{j+1}, v_{j+1} = conj(v_j)). Complex input: w
// and vr complex. Eigenvalue j goes to position rank(j) = #{i: w_i before
// w_j} + #{i < j: w_i == w_j} (real part, then imaginary part, ascending);
// its vector is scaled to unit 2-norm (host-cpu's normalize_column), then
// its first largest-magnitude entry made real and positive.
template <class R> __device__ inline cx<R> eig_value(const R* w, i64 n, i64 j) { return make<cx<R> >::of(w[j], w[n + j]); }
template <class R> __device__ inline cx<R> eig_value(const cx<R>* w, i64, i64 j) { return w[j]; }
template <class R> __device__ inline cx<R> eig_entry_real(const R* vr, const R* w, i64 n, i64 i, i64 j) {
    R wi = w[n + j];
    if (wi > R(0) && j + 1 < n) return make<cx<R> >::of(vr[i + j * n], vr[i + (j + 1) * n]);
    if (wi < R(0) && j > 0) return make<cx<R> >::of(vr[i + (j - 1) * n], -vr[i + j * n]);
    return make<cx<R> >::of(vr[i + j * n], R(0));
}
__device__ inline c32 eig_entry(const float* vr, const float* w, i64 n, i64 i, i64 j) { return eig_entry_real<float>(vr, w, n, i, j); }
__device__ inline c64 eig_entry(const double* vr, const double* w, i64 n, i64 i, i64 j) { return eig_entry_real<double>(vr, w, n, i, j); }
template <class R> __device__ inline cx<R> eig_entry(const cx<R>* vr, const cx<R>*, i64 n, i64 i, i64 j) { return vr[i + j * n]; }
template <class R> __device__ inline bool eig_before(cx<R> x, cx<R> y) { return x.re < y.re || (x.re == y.re && x.im < y.im); }

template <class T> __device__ void eig_finish_impl(cx<typename real_of<T>::type>* wo, cx<typename real_of<T>::type>* vo, const T* w, const T* vr, i64 n, i64 batch) {
    typedef typename real_of<T>::type R;
    typedef cx<R> C;
    // w holds 2n reals per item for real T, n complex values for complex T:
    // 2n R-sized slots either way.
    GRID_LOOP(e, batch * n) {
        i64 b = e / n, j = e % n;
        const T* wb = w + b * (sizeof(T) == sizeof(R) ? 2 * n : n);
        C x = eig_value(wb, n, j);
        i64 rank = 0;
        for (i64 i = 0; i < n; ++i) {
            C y = eig_value(wb, n, i);
            if (eig_before(y, x) || (i < j && y.re == x.re && y.im == x.im)) ++rank;
        }
        if (wo) wo[b * n + rank] = x;
        if (!vo) continue;
        const T* vb = vr + b * n * n;
        R big = 0;
        for (i64 i = 0; i < n; ++i) { R a = abs_of(eig_entry(vb, wb, n, i, j)); big = a > big ? a : big; }
        R factor = R(1);
        if (big != R(0)) {
            R inv_big = R(1) / big, sum = 0;
            for (i64 i = 0; i < n; ++i) sum += abs2_of(scale_by(eig_entry(vb, wb, n, i, j), inv_big));
            factor = R(1) / (big * sqrt_of(sum));
        }
        R best = 0;
        C pivot = zero<C>();
        for (i64 i = 0; i < n; ++i) {
            C v = big != R(0) ? scale_by(eig_entry(vb, wb, n, i, j), factor) : eig_entry(vb, wb, n, i, j);
            R mag = abs_of(v);
            if (mag > best) { best = mag; pivot = v; }
        }
        C c = best == R(0) ? one<C>() : scale_by(conj_of(pivot), R(1) / best);
        C* out = vo + b * n * n + rank * n;
        for (i64 i = 0; i < n; ++i) {
            C v = big != R(0) ? scale_by(eig_entry(vb, wb, n, i, j), factor) : eig_entry(vb, wb, n, i, j);
            out[i] = v * c;
        }
    }
}

// ---- SVD recombinations (host-cpu's kernels/recombine.rs) -----------------
// kept_rank: rank[b] for the descending values s (k per item, real type R):
// mode 0 keeps min(count, k); mode 1 keeps the leading s_i > max(atol,
// rtol * s_0), compared in double as host-cpu does.
template <class R> __device__ void kept_rank_impl(i64* rank, const R* s, i64 k, i64 batch, int mode, i64 count, double atol, double rtol) {
    GRID_LOOP(b, batch) {
        const R* sb = s + b * k;
        if (mode == 0) { rank[b] = count < k ? count : k; continue; }
        double largest = k > 0 ? (double)sb[0] : 0.0;
        double threshold = atol > rtol * largest ? atol : rtol * largest;
        i64 p = 0;
        while (p < k && (double)sb[p] > threshold) ++p;
        rank[b] = p;
    }
}
// spectral_scale: x (rows x cols per item) with its index along `axis`
// (0: the column j, 1: the row i) below rank[b]: mode 0 times s_idx, mode 1
// times 1/s_idx (host-cpu's scale by the reciprocal), mode 2 unchanged; at
// or above rank[b]: zero.
template <class T> __device__ void spectral_scale_impl(int axis, int mode, T* x, i64 rows, i64 cols, const typename real_of<T>::type* s, i64 k, const i64* rank, i64 batch) {
    typedef typename real_of<T>::type R;
    GRID_LOOP(e, batch * rows * cols) {
        i64 b = e / (rows * cols), inner = e % (rows * cols), i = inner % rows, j = inner / rows;
        i64 idx = axis == 0 ? j : i;
        if (idx >= rank[b]) { x[e] = zero<T>(); continue; }
        if (mode == 0) x[e] = scale_by(x[e], s[b * k + idx]);
        else if (mode == 1) x[e] = scale_by(x[e], R(1) / s[b * k + idx]);
    }
}

// ---- extern "C" entry points, one per dtype ----------------------------------
#define MAP(SUF, T, U) extern "C" __global__ void map_##SUF(int code, U* y, const T* x, Walk w, View v, double p0, i64 r0, i64 c0, i64 rows, i64 cols) { map_impl<T, U>(code, y, x, w, v, p0, r0, c0, rows, cols); }
MAP(f32_f32, float, float)
MAP(f64_f64, double, double)
MAP(c32_c32, c32, c32)
MAP(c64_c64, c64, c64)
MAP(c32_f32, c32, float)
MAP(c64_f64, c64, double)
MAP(f32_c32, float, c32)
MAP(f64_c64, double, c64)

#define PER_DTYPE(SUF, T, R) \
extern "C" __global__ void zip_##SUF(int code, T* z, const T* a, const T* b, Walk w, View va, View vb) { zip_impl<T, T>(code, z, a, b, w, va, vb); } \
extern "C" __global__ void fill_##SUF(T* y, i64 n, double value) { fill_impl<T>(y, n, value); } \
extern "C" __global__ void eye_##SUF(T* y, i64 n, i64 k) { eye_impl<T>(y, n, k); } \
extern "C" __global__ void rank_mask_##SUF(T* y, const i64* rank, Walk items, View v, i64 k) { rank_mask_impl<T>(y, rank, items, v, k); } \
extern "C" __global__ void reduce_##SUF(int code, T* y, const T* x, Walk items, View vi, Walk core, View vc) { reduce_impl<T>(code, y, x, items, vi, core, vc); } \
extern "C" __global__ void pair_inv_##SUF(int pair, int reg, double p, T* y, const T* x, Walk items, View vi, i64 s0, i64 k) { pair_inv_impl<T>(pair, reg, p, y, x, items, vi, s0, k); } \
extern "C" __global__ void pivot_phase_##SUF(T* y, const T* u, Walk cols, View vc, i64 s0, i64 m) { pivot_phase_impl<T>(y, u, cols, vc, s0, m); } \
extern "C" __global__ void canonical_pairs_##SUF(T* u, i64 m, i64 ucols, i64 su, T* v, i64 n, i64 vcols, i64 sv, i64 k, i64 batch) { canonical_pairs_impl<T>(u, m, ucols, su, v, n, vcols, sv, k, batch); } \
extern "C" __global__ void qr_sign_##SUF(T* q, i64 m, i64 qcols, i64 sq, T* r, i64 ldr, i64 n, i64 sr, i64 k, i64 batch) { qr_sign_impl<T>(q, m, qcols, sq, r, ldr, n, sr, k, batch); } \
extern "C" __global__ void permute_rows_##SUF(int mode, T* y, const T* x, const i64* perm, i64 n, i64 r, i64 batch) { permute_rows_impl<T>(mode, y, x, perm, n, r, batch); } \
extern "C" __global__ void lu_det_##SUF(int mode, T* d, R* logabs, const T* lu, const i64* ipiv, i64 n, i64 batch) { lu_det_impl<T>(mode, d, logabs, lu, ipiv, n, batch); } \
extern "C" __global__ void nonfinite_flags_##SUF(int* flags, const T* x, i64 per_item, i64 batch) { nonfinite_flags_impl<T>(flags, x, per_item, batch); } \
extern "C" __global__ void nonfinite_tri_##SUF(int* flags, T* x, i64 n, int part, int unit, int herm, i64 batch) { nonfinite_tri_impl<T>(flags, x, n, part, unit, herm, batch); } \
extern "C" __global__ void kept_rank_##SUF(i64* rank, const R* s, i64 k, i64 batch, int mode, i64 count, double atol, double rtol) { kept_rank_impl<R>(rank, s, k, batch, mode, count, atol, rtol); } \
extern "C" __global__ void spectral_scale_##SUF(int axis, int mode, T* x, i64 rows, i64 cols, const R* s, i64 k, const i64* rank, i64 batch) { spectral_scale_impl<T>(axis, mode, x, rows, cols, s, k, rank, batch); } \
extern "C" __global__ void eig_finish_##SUF(cx<R>* wo, cx<R>* vo, const T* w, const T* vr, i64 n, i64 batch) { eig_finish_impl<T>(wo, vo, w, vr, n, batch); }
PER_DTYPE(f32, float, float)
PER_DTYPE(f64, double, double)
PER_DTYPE(c32, c32, float)
PER_DTYPE(c64, c64, double)

extern "C" __global__ void zip_real_c32(int code, c32* z, const c32* a, const float* b, Walk w, View va, View vb) { zip_impl<c32, float>(code, z, a, b, w, va, vb); }
extern "C" __global__ void zip_real_c64(int code, c64* z, const c64* a, const double* b, Walk w, View va, View vb) { zip_impl<c64, double>(code, z, a, b, w, va, vb); }
// Strided copy of i64 data (permutations, ranks) into contiguous order.
extern "C" __global__ void copy_i64(i64* y, const i64* x, Walk w, View v) {
    GRID_LOOP(e, w.count) { i64 row, col; y[e] = x[locate(w, v, e, &row, &col)]; }
}
extern "C" __global__ void ipiv_to_perm(i64* perm, const i64* ipiv, i64 m, i64 k, i64 batch) { ipiv_to_perm_impl(perm, ipiv, m, k, batch); }
extern "C" __global__ void first_failure(i64* out, const int* info, i64 batch) { first_failure_impl(out, info, batch); }
