//! The op table: every linear-algebra op declared once.
//!
//! Each entry says everything lindiff knows about an op besides its shape
//! checks (`infer`, in the op's own file) and its derivative rule (in
//! `ad/rules/<rule>.rs`):
//!
//! * the enum variant and its payload type (the same name), with the
//!   variant's doc;
//! * `name`: the op's name in messages;
//! * `family`: lindiff-core's cargo feature that builds it (see [`Family`]);
//! * `dtypes`: the dtypes its first argument may have;
//! * `inputs` / `outputs`: argument and result names, in order;
//! * `rule`: the module of `ad/rules` whose `jvp` differentiates it;
//! * `support`: what that rule gives per output ([`Support`]), as an
//!   expression of the payload bound to the name between bars;
//! * `methods`: the face methods that run it, each with its doc, extra
//!   arguments (the op's inputs come first, in order), the outputs it
//!   returns — one (`-> x`), a tuple (`-> (sign, logabsdet)`) or a factors
//!   struct (`-> SvdFactors { u, s, vh }`) — and, after `=`, the payload it
//!   builds (the payload's default when absent).
//!
//! [`op_table!`] hands the whole table to a macro; the enum and its
//! accessors (`op/mod.rs`), the derivative dispatch (`ad/rules/mod.rs`), the
//! support table (`ad/support.rs`) and the face methods (`face/ops.rs`) are
//! expansions of it. Adding an op is one entry here, its `infer`, its rule,
//! and a kernel arm in each provider (whose exhaustive matches name the op
//! that lacks one).
//!
//! [`Family`]: super::Family
//! [`Support`]: crate::ad::Support

/// Calls `$callback! { <every entry> }` (see the module docs for the form
/// of an entry).
macro_rules! op_table {
    ($callback:ident) => {
        $callback! {
            /// Thin SVD: `a` → `u`, `s`, `vh`.
            Svd {
                name: "svd", family: "op-svd", dtypes: [F32, F64, C32, C64],
                inputs: [a], outputs: [u, s, vh], rule: svd,
                support: |op| svd_supports(op),
                methods: {
                    /// Thin SVD `a = u diag(s) vh` (Vᴴ, not V): u m×k, s k (real,
                    /// descending), vh k×n with k = min(m, n).
                    ///
                    /// ```
                    /// use lindiff_cpu::prelude::*;
                    /// let mut la = Direct::new(Cpu::new());
                    /// let a = la.tensor_row_major(3, 2, &[3.0, 0.0, 0.0, -2.0, 0.0, 0.0])?;
                    /// let f = la.svd(&a)?;
                    /// assert_eq!(f.s.to_vec::<f64>()?, [3.0, 2.0]);
                    /// assert_eq!(f.u.dims(), [3, 2]);
                    /// # Ok::<(), Error>(())
                    /// ```
                    ///
                    /// # Errors
                    /// Shape errors naming `svd`; non-finite input; a result beyond the dtype's range
                    /// (`OutOfRange`); non-convergence.
                    fn svd -> SvdFactors { u, s, vh } = Svd(SvdOptions::default());
                    /// Thin SVD with options (driver, derivative broadening).
                    /// `options.vectors` is ignored here (both factors are returned);
                    /// use `svd_vals` for values only.
                    ///
                    /// # Errors
                    /// As `svd`, plus invalid options.
                    fn svd_with_options(options: SvdOptions) -> SvdFactors { u, s, vh }
                        = Svd(options.vectors(SvdVectors::Both));
                },
            }
            /// Singular values only: `a` → `s`.
            SvdVals {
                name: "svd_vals", family: "op-svd", dtypes: [F32, F64, C32, C64],
                inputs: [a], outputs: [s], rule: svd,
                support: |_op| list(&[ok(S_VALS)]),
                methods: {
                    /// Singular values only (real, descending).
                    ///
                    /// # Errors
                    /// Shape errors naming `svd_vals`; non-finite input; a result beyond the dtype's range
                    /// (`OutOfRange`); non-convergence.
                    fn svd_vals -> s;
                },
            }
            /// Full SVD: `a` → `u` (m×m), `s`, `vh` (n×n).
            SvdFull {
                name: "svd_full", family: "op-svd", dtypes: [F32, F64, C32, C64],
                inputs: [a], outputs: [u, s, vh], rule: svd,
                support: |op| svd_full_supports(op),
                methods: {
                    /// Full SVD: `u` m×m, `vh` n×n (the columns beyond min(m, n)
                    /// complete the bases).
                    ///
                    /// # Errors
                    /// Shape errors naming `svd_full`; non-finite input; a result beyond the dtype's range
                    /// (`OutOfRange`); non-convergence.
                    fn svd_full -> SvdFactors { u, s, vh };
                },
            }
            /// Truncated thin SVD, rank from the data, masked to static shapes:
            /// `a` → `u`, `s`, `vh`, `rank`.
            SvdTruncated {
                name: "svd_truncated", family: "op-svd", dtypes: [F32, F64, C32, C64],
                inputs: [a], outputs: [u, s, vh, rank], rule: svd_truncated,
                support: |_op| list(&[ok(TRUNCATED_VECTORS), ok(TRUNCATED_S), ok(TRUNCATED_VECTORS), INT]),
                methods: {
                    /// Truncated thin SVD, the rank p chosen per batch item from the
                    /// data at run time ([`Truncation::Count`]: min(p, k);
                    /// [`Truncation::Tolerance`]: the s_i > max(atol, rtol·s₀)).
                    ///
                    /// Every face returns the same masked, static-shape form (see
                    /// [`SvdTruncated`]): u m×k, s k, vh k×n with the triplets from
                    /// `rank` on zeroed, and `rank` as an i64 tensor. For the p-column
                    /// factors themselves, see [`SvdTruncatedFactors::sliced`].
                    /// Differentiable (the thin rule with zero cotangents on the
                    /// discarded triplets) where the rank is locally constant.
                    ///
                    /// # Errors
                    /// Shape errors naming `svd_truncated`; an invalid truncation (a
                    /// negative or non-finite threshold, a count of 0); non-finite
                    /// input; a result beyond the dtype's range (`OutOfRange`);
                    /// non-convergence.
                    fn svd_truncated(keep: Truncation) -> SvdTruncatedFactors { u, s, vh, rank }
                        = SvdTruncated(keep);
                },
            }
            /// Unpivoted Householder QR: `a` → `q`, `r`.
            Qr {
                name: "qr", family: "op-qr", dtypes: [F32, F64, C32, C64],
                inputs: [a], outputs: [q, r], rule: qr,
                support: |op| match op.0.mode {
                    QrMode::Reduced => list(&[ok(QR), ok(QR)]),
                    QrMode::Complete => list(&[ok(QR_COMPLETE_Q), ok(QR)]),
                },
                methods: {
                    /// Thin unpivoted QR, diag(r) real and ≥ 0.
                    ///
                    /// ```
                    /// use lindiff_cpu::prelude::*;
                    /// let mut la = Direct::new(Cpu::new());
                    /// let a = la.tensor_row_major(2, 2, &[0.0, -3.0, 2.0, 0.0])?;
                    /// let f = la.qr(&a)?;
                    /// // r = [[2, 0], [0, 3]] (column-major), q = a r⁻¹.
                    /// assert_eq!(f.r.to_vec::<f64>()?, [2.0, 0.0, 0.0, 3.0]);
                    /// assert_eq!(f.q.to_vec::<f64>()?, [0.0, 1.0, -1.0, 0.0]);
                    /// # Ok::<(), Error>(())
                    /// ```
                    ///
                    /// # Errors
                    /// Shape errors naming `qr`; non-finite input; a result beyond the dtype's range
                    /// (`OutOfRange`).
                    fn qr -> QrFactors { q, r };
                    /// QR with options (thin or complete Q).
                    ///
                    /// # Errors
                    /// As `qr`.
                    fn qr_with_options(options: QrOptions) -> QrFactors { q, r } = Qr(options);
                },
            }
            /// Column-pivoted QR with numerical rank: `a` → `q`, `r`, `perm`, `rank`.
            RankRevealingQr {
                name: "rank_revealing_qr", family: "op-qr", dtypes: [F32, F64, C32, C64],
                inputs: [a], outputs: [q, r, perm, rank], rule: qr,
                support: |_op| list(&[PIVOT, PIVOT, INT, INT]),
                methods: {
                    /// Column-pivoted QR with the numerical rank (not differentiable).
                    ///
                    /// # Errors
                    /// Shape errors; invalid options; non-finite input; a result beyond the dtype's range
                    /// (`OutOfRange`).
                    fn rank_revealing_qr(options: RankRevealingQrOptions)
                        -> RankRevealingQrFactors { q, r, perm, rank } = RankRevealingQr(options);
                },
            }
            /// Compact Householder QR: `a` → `h`, `tau`.
            HouseholderQrFactor {
                name: "householder_qr_factor", family: "op-qr", dtypes: [F32, F64, C32, C64],
                inputs: [a], outputs: [h, tau], rule: householder,
                support: |_op| list(&[ok(HOUSEHOLDER), ok(HOUSEHOLDER)]),
                methods: {
                    /// Compact Householder QR, extensible with
                    /// [`HouseholderQr::append_columns`].
                    ///
                    /// # Errors
                    /// Shape errors; non-finite input; a result beyond the dtype's range (`OutOfRange`).
                    fn householder_qr -> HouseholderQr { h, tau };
                },
            }
            /// Incremental QR: `h`, `tau`, `b` → `h`, `tau` of `[a b]`.
            HouseholderQrAppend {
                name: "householder_qr_append", family: "op-qr", dtypes: [F32, F64, C32, C64],
                inputs: [h, tau, b], outputs: [h, tau], rule: householder,
                support: |_op| list(&[ok(HOUSEHOLDER), ok(HOUSEHOLDER)]),
                methods: {},
            }
            /// Thin Q from compact reflectors: `h`, `tau` → `q`.
            HouseholderQrQ {
                name: "householder_qr_q", family: "op-qr", dtypes: [F32, F64, C32, C64],
                inputs: [h, tau], outputs: [q], rule: householder,
                support: |_op| list(&[ok(HOUSEHOLDER_QR)]),
                methods: {},
            }
            /// R from compact reflectors: `h` → `r`.
            HouseholderQrR {
                name: "householder_qr_r", family: "op-qr", dtypes: [F32, F64, C32, C64],
                inputs: [h], outputs: [r], rule: householder,
                support: |_op| list(&[ok(HOUSEHOLDER_QR)]),
                methods: {},
            }
            /// Q or Qᴴ applied to a block: `h`, `tau`, `b` → `y`.
            HouseholderQrApply {
                name: "householder_qr_apply", family: "op-qr", dtypes: [F32, F64, C32, C64],
                inputs: [h, tau, b], outputs: [y], rule: householder,
                support: |_op| list(&[ok(HOUSEHOLDER_APPLY)]),
                methods: {},
            }
            /// Hermitian eigendecomposition: `a` → `w`, `v`.
            Eigh {
                name: "eigh", family: "op-eigh", dtypes: [F32, F64, C32, C64],
                inputs: [a], outputs: [w, v], rule: eigh,
                support: |op| {
                    let v = if op.0.derivative_eps.is_some() { EIGH_V_EPS } else { EIGH_V };
                    list(&[ok(EIGH_W), ok(v)])
                },
                methods: {
                    /// Hermitian eigendecomposition `a = v diag(w) vᴴ` (reads the lower
                    /// triangle): w real ascending.
                    ///
                    /// ```
                    /// use lindiff_cpu::prelude::*;
                    /// let mut la = Direct::new(Cpu::new());
                    /// let a = la.tensor_row_major(2, 2, &[2.0, 1.0, 1.0, 2.0])?;
                    /// let w = la.eigh(&a)?.w.to_vec::<f64>()?;
                    /// assert!((w[0] - 1.0).abs() < 1e-15 && (w[1] - 3.0).abs() < 1e-15);
                    /// # Ok::<(), Error>(())
                    /// ```
                    ///
                    /// # Errors
                    /// Non-square input; non-finite input; a result beyond the dtype's range (`OutOfRange`);
                    /// non-convergence.
                    fn eigh -> EighFactors { w, v };
                    /// Hermitian eigendecomposition with options.
                    ///
                    /// # Errors
                    /// As `eigh`.
                    fn eigh_with_options(options: EighOptions) -> EighFactors { w, v } = Eigh(options);
                },
            }
            /// Hermitian eigenvalues only: `a` → `w`.
            EighVals {
                name: "eigh_vals", family: "op-eigh", dtypes: [F32, F64, C32, C64],
                inputs: [a], outputs: [w], rule: eigh,
                support: |_op| list(&[ok(EIGH_VALS_W)]),
                methods: {
                    /// Hermitian eigenvalues only (real, ascending).
                    ///
                    /// # Errors
                    /// As `eigh`.
                    fn eigvalsh -> w;
                },
            }
            /// A function of a Hermitian matrix: `a` → `fa` = V f(Λ) Vᴴ.
            FunmHermitian {
                name: "funm_hermitian", family: "op-eigh", dtypes: [F32, F64, C32, C64],
                inputs: [a], outputs: [fa], rule: funm,
                support: |_op| list(&[ok(FUNM)]),
                methods: {
                    /// f(a) = v f(Λ) vᴴ for Hermitian `a` (reads the lower triangle),
                    /// f from [`MatrixFunction`](crate::op::MatrixFunction). Its derivative
                    /// is exact at tied eigenvalues.
                    ///
                    /// ```
                    /// use lindiff_cpu::prelude::*;
                    /// let mut la = Direct::new(Cpu::new());
                    /// // diag(1, 4) in a rotated basis: its square root has eigenvalues 1, 2.
                    /// let a = la.tensor_row_major(2, 2, &[2.5, 1.5, 1.5, 2.5])?;
                    /// let r = la.funm_hermitian(&a, op::MatrixFunction::Sqrt)?;
                    /// let r = r.to_vec::<f64>()?;
                    /// for (got, want) in r.iter().zip([1.5, 0.5, 0.5, 1.5]) {
                    ///     assert!((got - want).abs() < 1e-14);
                    /// }
                    /// # Ok::<(), Error>(())
                    /// ```
                    ///
                    /// # Errors
                    /// Non-square input; non-finite input; a result beyond the dtype's range (`OutOfRange`);
                    /// non-convergence; for `Log` an
                    /// eigenvalue ≤ 0, for `Sqrt` one below −10·n·ε·max|λ|
                    /// (`NotPositiveDefinite`).
                    fn funm_hermitian(function: MatrixFunction) -> fa = FunmHermitian(function);
                    /// The exponential of a Hermitian matrix.
                    ///
                    /// # Errors
                    /// As `funm_hermitian`.
                    fn expm_hermitian -> fa = FunmHermitian(MatrixFunction::Exp);
                    /// The principal logarithm of a positive definite matrix.
                    ///
                    /// # Errors
                    /// As `funm_hermitian`; an eigenvalue ≤ 0.
                    fn logm_pd -> fa = FunmHermitian(MatrixFunction::Log);
                    /// The positive semidefinite square root of a positive semidefinite
                    /// matrix.
                    ///
                    /// # Errors
                    /// As `funm_hermitian`; an eigenvalue below −10·n·ε·max|λ|.
                    fn sqrtm_psd -> fa = FunmHermitian(MatrixFunction::Sqrt);
                },
            }
            /// `funm_hermitian` with what its derivative reads: `a` → `fa`, `w`, `v`,
            /// `gamma`.
            FunmHermitianFactors {
                name: "funm_hermitian_factors", family: "op-eigh", dtypes: [F32, F64, C32, C64],
                inputs: [a], outputs: [fa, w, v, gamma], rule: funm,
                support: |_op| list(&[ok(FUNM), RULE_DATA, RULE_DATA, RULE_DATA]),
                methods: {},
            }
            /// The Daleckii–Krein derivative of `funm_hermitian` from its factors:
            /// `a`, `v`, `w`, `gamma`, `e` → `l`.
            FunmHermitianFrechet {
                name: "funm_hermitian_frechet", family: "op-eigh", dtypes: [F32, F64, C32, C64],
                inputs: [a, v, w, gamma, e], outputs: [l], rule: funm,
                support: |_op| list(&[ok(FUNM_FRECHET)]),
                methods: {},
            }
            /// The second derivative of `funm_hermitian` from its factors: `v`,
            /// `w`, `gamma`, `e`, `d` → `l`.
            FunmHermitianSecond {
                name: "funm_hermitian_second", family: "op-eigh", dtypes: [F32, F64, C32, C64],
                inputs: [v, w, gamma, e, d], outputs: [l], rule: funm,
                support: |_op| list(&[ok(FUNM_SECOND)]),
                methods: {},
            }
            /// The exponential of a general matrix: `a` → `ea`.
            Expm {
                name: "expm", family: "op-matfun", dtypes: [F32, F64, C32, C64],
                inputs: [a], outputs: [ea], rule: matfun,
                support: |_op| list(&[ok(EXPM)]),
                methods: {
                    /// e^a for a general square `a`, by scaling and squaring with a
                    /// degree-3…13 Padé approximant; its derivative is the Fréchet
                    /// derivative ([`expm_frechet`](Self::expm_frechet)).
                    ///
                    /// ```
                    /// use lindiff_cpu::prelude::*;
                    /// let mut la = Direct::new(Cpu::new());
                    /// // A nilpotent a: e^a = I + a.
                    /// let a = la.tensor_row_major(2, 2, &[0.0, 3.0, 0.0, 0.0])?;
                    /// let e = la.expm(&a)?.to_vec::<f64>()?;
                    /// for (got, want) in e.iter().zip([1.0, 0.0, 3.0, 1.0]) {
                    ///     assert!((got - want).abs() < 1e-15);
                    /// }
                    /// # Ok::<(), Error>(())
                    /// ```
                    ///
                    /// # Errors
                    /// Non-square input; non-finite input; a result that overflows
                    /// (`OutOfRange` naming `a`).
                    fn expm -> ea;
                },
            }
            /// The Fréchet derivative of the exponential: `a`, `e` → `l`.
            ExpmFrechet {
                name: "expm_frechet", family: "op-matfun", dtypes: [F32, F64, C32, C64],
                inputs: [a, e], outputs: [l], rule: matfun,
                support: |_op| list(&[ok(EXPM)]),
                methods: {
                    /// L(a, e) = d/dt e^{a + t·e} at t = 0: the directional derivative
                    /// of [`expm`](Self::expm), by the Padé approximant's own derivative
                    /// (Al-Mohy and Higham 2009).
                    ///
                    /// ```
                    /// use lindiff_cpu::prelude::*;
                    /// let mut la = Direct::new(Cpu::new());
                    /// // Where a and e commute, L(a, e) = e^a e.
                    /// let a = la.tensor_row_major(2, 2, &[1.0, 0.0, 0.0, 2.0])?;
                    /// let e = la.tensor_row_major(2, 2, &[3.0, 0.0, 0.0, 0.5])?;
                    /// let l = la.expm_frechet(&a, &e)?.to_vec::<f64>()?;
                    /// let want = [3.0 * 1f64.exp(), 0.0, 0.0, 0.5 * 2f64.exp()];
                    /// for (got, want) in l.iter().zip(want) {
                    ///     assert!((got - want).abs() < 1e-14 * want.abs().max(1.0));
                    /// }
                    /// # Ok::<(), Error>(())
                    /// ```
                    ///
                    /// # Errors
                    /// Non-square `a`; `e` of another shape, dtype or batch; non-finite
                    /// input; a result that overflows (`OutOfRange` naming `a`).
                    fn expm_frechet -> l = ExpmFrechet(MatOp::Identity);
                },
            }
            /// `expm` with what its gradient reads: `a` → `ea`, `terms`, `piv`.
            ExpmFactors {
                name: "expm_factors", family: "op-matfun", dtypes: [F32, F64, C32, C64],
                inputs: [a], outputs: [ea, terms, piv], rule: matfun,
                support: |_op| list(&[ok(EXPM), EXPM_DATA, INT]),
                methods: {},
            }
            /// The Fréchet derivative of the exponential from `expm_factors`'
            /// terms: `a`, `terms`, `piv`, `e` → `l`.
            ExpmFrechetFactored {
                name: "expm_frechet_factored", family: "op-matfun", dtypes: [F32, F64, C32, C64],
                inputs: [a, terms, piv, e], outputs: [l], rule: matfun,
                support: |_op| list(&[ok(EXPM)]),
                methods: {},
            }
            /// The principal logarithm of a general matrix: `a` → `la`.
            Logm {
                name: "logm", family: "op-matfun", dtypes: [F32, F64, C32, C64],
                inputs: [a], outputs: [la], rule: matfun,
                support: |_op| list(&[ok(LOGM)]),
                methods: {
                    /// The principal logarithm of a square `a` (eigenvalues off the
                    /// closed negative real axis for real input), over the complex
                    /// Schur form by inverse scaling and squaring; its derivative is
                    /// [`logm_frechet`](Self::logm_frechet).
                    ///
                    /// ```
                    /// use lindiff_cpu::prelude::*;
                    /// let mut la = Direct::new(Cpu::new());
                    /// // log [[e, 1], [0, e]] = [[1, 1/e], [0, 1]].
                    /// let e = 1f64.exp();
                    /// let a = la.tensor_row_major(2, 2, &[e, 1.0, 0.0, e])?;
                    /// let l = la.logm(&a)?.to_vec::<f64>()?;
                    /// for (got, want) in l.iter().zip([1.0, 0.0, 1.0 / e, 1.0]) {
                    ///     assert!((got - want).abs() < 1e-14);
                    /// }
                    /// # Ok::<(), Error>(())
                    /// ```
                    ///
                    /// # Errors
                    /// Non-square input; non-finite input; an eigenvalue exactly 0
                    /// (`Singular`); a real input with an eigenvalue on the negative
                    /// real axis (`OutsideDomain`: pass it as complex); Schur
                    /// iterations that do not converge.
                    fn logm -> la;
                },
            }
            /// The Fréchet derivative of the logarithm: `a`, `e` → `l`.
            LogmFrechet {
                name: "logm_frechet", family: "op-matfun", dtypes: [F32, F64, C32, C64],
                inputs: [a, e], outputs: [l], rule: matfun,
                support: |_op| list(&[ok(LOGM)]),
                methods: {
                    /// L(a, e) = d/dt log(a + t·e) at t = 0, by the block identity
                    /// log [[a, e], [0, a]] = [[log a, L(a, e)], [0, log a]].
                    ///
                    /// # Errors
                    /// As `logm`; `e` of another shape, dtype or batch.
                    fn logm_frechet -> l = LogmFrechet(MatOp::Identity);
                },
            }
            /// The principal square root of a general matrix: `a` → `sa`.
            Sqrtm {
                name: "sqrtm", family: "op-matfun", dtypes: [F32, F64, C32, C64],
                inputs: [a], outputs: [sa], rule: matfun,
                support: |_op| list(&[ok(SQRTM)]),
                methods: {
                    /// The principal square root of a square `a` (no eigenvalue on
                    /// the negative real axis for real input), over the complex Schur
                    /// form (Björck–Hammarling); its derivative is
                    /// [`sqrtm_frechet`](Self::sqrtm_frechet).
                    ///
                    /// ```
                    /// use lindiff_cpu::prelude::*;
                    /// let mut la = Direct::new(Cpu::new());
                    /// // sqrt [[4, 5], [0, 9]] = [[2, 1], [0, 3]].
                    /// let a = la.tensor_row_major(2, 2, &[4.0, 5.0, 0.0, 9.0])?;
                    /// let r = la.sqrtm(&a)?.to_vec::<f64>()?;
                    /// for (got, want) in r.iter().zip([2.0, 0.0, 1.0, 3.0]) {
                    ///     assert!((got - want).abs() < 1e-14);
                    /// }
                    /// # Ok::<(), Error>(())
                    /// ```
                    ///
                    /// # Errors
                    /// Non-square input; non-finite input; a real input with an
                    /// eigenvalue on the negative real axis (`OutsideDomain`); two zero
                    /// eigenvalues coupled in T, where no square root exists
                    /// (`Singular`); Schur iterations that do not converge.
                    fn sqrtm -> sa;
                },
            }
            /// The Fréchet derivative of the square root: `a`, `e` → `l`.
            SqrtmFrechet {
                name: "sqrtm_frechet", family: "op-matfun", dtypes: [F32, F64, C32, C64],
                inputs: [a, e], outputs: [l], rule: matfun,
                support: |_op| list(&[ok(SQRTM)]),
                methods: {
                    /// L(a, e) = d/dt (a + t·e)^{1/2} at t = 0: the solution of
                    /// S L + L S = e with S = a^{1/2}, in the Schur basis of a.
                    ///
                    /// # Errors
                    /// As `sqrtm`; `e` of another shape, dtype or batch.
                    fn sqrtm_frechet -> l = SqrtmFrechet(MatOp::Identity);
                },
            }
            /// General eigendecomposition: `a` → `w`, `v` (complex).
            Eig {
                name: "eig", family: "op-eig", dtypes: [F32, F64, C32, C64],
                inputs: [a], outputs: [w, v], rule: eig,
                support: |_op| list(&[ok(EIG_W), ok(EIG_V)]),
                methods: {
                    /// General eigendecomposition `a v = v diag(w)` (complex outputs).
                    ///
                    /// # Errors
                    /// Non-square input; non-finite input; a result beyond the dtype's range (`OutOfRange`).
                    fn eig -> EigFactors { w, v };
                },
            }
            /// General eigenvalues only: `a` → `w` (complex).
            EigVals {
                name: "eig_vals", family: "op-eig", dtypes: [F32, F64, C32, C64],
                inputs: [a], outputs: [w], rule: eig,
                support: |_op| list(&[ok(EIG_VALS_W)]),
                methods: {
                    /// General eigenvalues only (complex).
                    ///
                    /// # Errors
                    /// As `eig`.
                    fn eigvals -> w;
                },
            }
            /// Cholesky: `a` → `l`.
            Cholesky {
                name: "cholesky", family: "op-cholesky", dtypes: [F32, F64, C32, C64],
                inputs: [a], outputs: [l], rule: cholesky,
                support: |_op| list(&[ok(CHOLESKY)]),
                methods: {
                    /// Cholesky factor `l` with `a = l lᴴ` (reads the lower triangle).
                    ///
                    /// ```
                    /// use lindiff_cpu::prelude::*;
                    /// let mut la = Direct::new(Cpu::new());
                    /// let a = la.tensor_row_major(2, 2, &[4.0, 2.0, 2.0, 5.0])?;
                    /// // l = [[2, 0], [1, 2]] (column-major below).
                    /// assert_eq!(la.cholesky(&a)?.to_vec::<f64>()?, [2.0, 1.0, 0.0, 2.0]);
                    /// let not_pd = la.tensor_row_major(2, 2, &[1.0, 2.0, 2.0, 1.0])?;
                    /// assert!(matches!(la.cholesky(&not_pd), Err(Error::NotPositiveDefinite { .. })));
                    /// # Ok::<(), Error>(())
                    /// ```
                    ///
                    /// # Errors
                    /// Non-square input; not positive definite.
                    fn cholesky -> l;
                },
            }
            /// Partial-pivot LU: `a` → `perm`, `l`, `u`.
            Lu {
                name: "lu", family: "op-lu", dtypes: [F32, F64, C32, C64],
                inputs: [a], outputs: [perm, l, u], rule: lu,
                support: |_op| list(&[INT, ok(LU), ok(LU)]),
                methods: {
                    /// Partial-pivot LU `a[perm, :] = l u` (any shape; singular
                    /// matrices factor without error).
                    ///
                    /// # Errors
                    /// Shape errors; non-finite input; a result beyond the dtype's range (`OutOfRange`).
                    fn lu -> LuFactors { perm, l, u };
                },
            }
            /// Packed partial-pivot LU: `a` → `lu`, `perm`.
            LuFactor {
                name: "lu_factor", family: "op-lu", dtypes: [F32, F64, C32, C64],
                inputs: [a], outputs: [lu, perm], rule: lu,
                support: |_op| list(&[ok(LU), INT]),
                methods: {},
            }
            /// Fused solve: `a`, `b` → `x`, `lu`, `perm`.
            LuFactorSolve {
                name: "lu_factor_solve", family: "op-lu", dtypes: [F32, F64, C32, C64],
                inputs: [a, b], outputs: [x, lu, perm], rule: lu,
                support: |_op| list(&[ok(FUSED_SOLVE), ok(LU), INT]),
                methods: {
                    /// `x` with `a x = b` (one fused op: its derivative reuses the
                    /// factors).
                    ///
                    /// ```
                    /// use lindiff_cpu::prelude::*;
                    /// let mut la = Direct::new(Cpu::new());
                    /// let a = la.tensor_row_major(2, 2, &[2.0, 1.0, 1.0, 3.0])?;
                    /// let b = la.tensor(&[2, 1], &[3.0, 5.0])?;
                    /// let x = la.solve(&a, &b)?.to_vec::<f64>()?;
                    /// assert!((x[0] - 0.8).abs() < 1e-15 && (x[1] - 1.4).abs() < 1e-15);
                    /// # Ok::<(), Error>(())
                    /// ```
                    ///
                    /// # Errors
                    /// Non-square or empty-rectangular `a`, mismatched `b`; NaN/∞
                    /// input; `a` singular to working precision (the pivot-ratio
                    /// test of [`SolveOptions`]: `Error::Singular`); a solution beyond
                    /// the dtype's range (`OutOfRange`).
                    fn solve -> x;
                    /// `solve` with the singularity test of `options`:
                    /// `SolveOptions::default()` (the pivot-ratio test),
                    /// `SolveOptions::default().check(SingularCheck::ConditionEstimate)`
                    /// (adds a 1-norm condition estimate), `SolveOptions::raw()`
                    /// (only an exactly zero pivot is an error).
                    ///
                    /// # Errors
                    /// As `solve`, with `options`' test.
                    fn solve_with_options(options: SolveOptions) -> x = LuFactorSolve(options);
                },
            }
            /// Solve with saved factors: `lu`, `perm`, `b` → `x`.
            LuSolvePrepared {
                name: "lu_solve_prepared", family: "op-lu", dtypes: [F32, F64, C32, C64],
                inputs: [lu, perm, b], outputs: [x], rule: lu,
                support: |_op| list(&[ok(PREPARED_SOLVE)]),
                methods: {},
            }
            /// Full-pivot LU: `a` → `row_perm`, `col_perm`, `l`, `u`.
            FullPivLu {
                name: "full_piv_lu", family: "op-full-piv-lu", dtypes: [F32, F64, C32, C64],
                inputs: [a], outputs: [row_perm, col_perm, l, u], rule: full_piv_lu,
                support: |_op| list(&[INT, INT, ok(FULL_PIV_LU), ok(FULL_PIV_LU)]),
                methods: {
                    /// Full-pivot LU `a[row_perm, col_perm] = l u` (singular and
                    /// rectangular matrices factor exactly).
                    ///
                    /// # Errors
                    /// Shape errors; non-finite input; a result beyond the dtype's range (`OutOfRange`).
                    fn full_piv_lu -> FullPivLuFactors { row_perm, col_perm, l, u };
                },
            }
            /// Packed full-pivot LU: `a` → `lu`, `row_perm`, `col_perm`.
            FullPivLuFactor {
                name: "full_piv_lu_factor", family: "op-full-piv-lu", dtypes: [F32, F64, C32, C64],
                inputs: [a], outputs: [lu, row_perm, col_perm], rule: full_piv_lu,
                support: |_op| list(&[ok(FULL_PIV_LU), INT, INT]),
                methods: {},
            }
            /// Fused full-pivot solve: `a`, `b` → `x`, `lu`, `row_perm`, `col_perm`.
            FullPivLuSolve {
                name: "full_piv_lu_solve", family: "op-full-piv-lu", dtypes: [F32, F64, C32, C64],
                inputs: [a, b], outputs: [x, lu, row_perm, col_perm], rule: full_piv_lu,
                support: |_op| list(&[ok(FUSED_SOLVE), ok(FULL_PIV_LU), INT, INT]),
                methods: {
                    /// `x` with `a x = b` through a full-pivot LU.
                    ///
                    /// # Errors
                    /// As `solve`.
                    fn full_piv_lu_solve -> x;
                    /// `full_piv_lu_solve` with the singularity test of `options`.
                    ///
                    /// # Errors
                    /// As `solve`, with `options`' test.
                    fn full_piv_lu_solve_with_options(options: SolveOptions) -> x = FullPivLuSolve(options);
                },
            }
            /// Full-pivot solve with saved factors: `lu`, `row_perm`, `col_perm`, `b` → `x`.
            FullPivLuSolvePrepared {
                name: "full_piv_lu_solve_prepared", family: "op-full-piv-lu", dtypes: [F32, F64, C32, C64],
                inputs: [lu, row_perm, col_perm, b], outputs: [x], rule: full_piv_lu,
                support: |_op| list(&[ok(PREPARED_SOLVE)]),
                methods: {},
            }
            /// Triangular solve: `a`, `b` → `x`.
            TriangularSolve {
                name: "triangular_solve", family: "op-triangular-solve", dtypes: [F32, F64, C32, C64],
                inputs: [a, b], outputs: [x], rule: triangular_solve,
                support: |_op| list(&[ok(TRIANGULAR)]),
                methods: {
                    /// Triangular solve with options (side, triangle, unit diagonal, op).
                    ///
                    /// ```
                    /// use lindiff_cpu::prelude::*;
                    /// let mut la = Direct::new(Cpu::new());
                    /// let a = la.tensor_row_major(2, 2, &[2.0, 1.0, 0.0, 4.0])?;
                    /// let b = la.tensor(&[2, 1], &[4.0, 8.0])?;
                    /// let upper = TriangularSolveOptions::default().triangle(Triangle::Upper);
                    /// assert_eq!(la.triangular_solve(&a, &b, upper)?.to_vec::<f64>()?, [1.0, 2.0]);
                    /// // An exactly zero diagonal entry: singular, not infinities.
                    /// let z = la.tensor_row_major(2, 2, &[2.0, 1.0, 0.0, 0.0])?;
                    /// let err = la.triangular_solve(&z, &b, upper).unwrap_err();
                    /// assert_eq!(err.kind(), "Singular");
                    /// # Ok::<(), Error>(())
                    /// ```
                    ///
                    /// # Errors
                    /// Shape errors; NaN/∞ in the triangle read or in `b` (`NonFinite`); an
                    /// exactly zero entry on a non-unit diagonal (`Singular`); a solution
                    /// beyond the dtype's range (`OutOfRange`).
                    fn triangular_solve(options: TriangularSolveOptions) -> x = TriangularSolve(options);
                },
            }
            /// Determinant: `a` → `det`.
            Det {
                name: "det", family: "op-det", dtypes: [F32, F64, C32, C64],
                inputs: [a], outputs: [det], rule: det,
                support: |_op| list(&[ok(DET)]),
                methods: {
                    /// Determinant (square only; 1 for 0×0; singular → tiny value, no
                    /// error).
                    ///
                    /// ```
                    /// use lindiff_cpu::prelude::*;
                    /// let mut la = Direct::new(Cpu::new());
                    /// let a = la.tensor_row_major(2, 2, &[1.0, 2.0, 3.0, 4.0])?;
                    /// let det = la.det(&a)?.to_vec::<f64>()?[0];
                    /// assert!((det + 2.0).abs() < 1e-14);
                    /// let wide = la.tensor(&[2, 3], &[1.0; 6])?;
                    /// assert_eq!(la.det(&wide).unwrap_err().to_string(), "det: argument `a` must be square, got 2×3");
                    /// # Ok::<(), Error>(())
                    /// ```
                    ///
                    /// # Errors
                    /// Non-square input; non-finite input; a result beyond the dtype's range (`OutOfRange`).
                    fn det -> det;
                },
            }
            /// Sign and log-modulus of the determinant: `a` → `sign`, `logabsdet`.
            Slogdet {
                name: "slogdet", family: "op-det", dtypes: [F32, F64, C32, C64],
                inputs: [a], outputs: [sign, logabsdet], rule: det,
                support: |_op| list(&[ok(SIGN), ok(LOGABSDET)]),
                methods: {
                    /// `(sign, log|det|)`: (0, −∞) for a singular matrix.
                    ///
                    /// # Errors
                    /// Non-square input; non-finite input.
                    fn slogdet -> (sign, logabsdet);
                },
            }
            /// Adjugate (the derivative of the determinant): `a` → `adj`.
            Adjugate {
                name: "adjugate", family: "op-det", dtypes: [F32, F64, C32, C64],
                inputs: [a], outputs: [adj], rule: det,
                support: |_op| list(&[OK]),
                methods: {
                    /// The adjugate `adj(a)` (`a · adj = det(a) · I`; finite at singular
                    /// `a`, zero at corank ≥ 2). The derivative of `det`.
                    ///
                    /// # Errors
                    /// Non-square input; non-finite input; a result beyond the dtype's range (`OutOfRange`).
                    fn adjugate -> adj;
                },
            }
            /// Best rank-p approximation: `a` → `a_p`, `rank`.
            LowRankApprox {
                name: "low_rank_approx", family: "op-recombine", dtypes: [F32, F64, C32, C64],
                inputs: [a], outputs: [a_p, rank], rule: recombine,
                support: |_op| list(&[ok(LOW_RANK), INT]),
                methods: {
                    /// Best approximation of rank p (chosen per item from the data);
                    /// returns `(a_p, rank)`.
                    ///
                    /// # Errors
                    /// Shape errors; invalid truncation; non-finite input; a result
                    /// beyond the dtype's range (`OutOfRange`).
                    fn low_rank_approx(keep: Truncation) -> (a_p, rank) = LowRankApprox(keep);
                },
            }
            /// Polar factor U Vᴴ: `a` → `w`.
            Polar {
                name: "polar", family: "op-recombine", dtypes: [F32, F64, C32, C64],
                inputs: [a], outputs: [w], rule: recombine,
                support: |_op| list(&[ok(POLAR)]),
                methods: {
                    /// Polar factor `u vᴴ`.
                    ///
                    /// # Errors
                    /// Shape errors; non-finite input; a result beyond the dtype's range (`OutOfRange`).
                    fn polar -> w;
                },
            }
            /// Moore–Penrose pseudo-inverse: `a` → `pinv`.
            Pinv {
                name: "pinv", family: "op-recombine", dtypes: [F32, F64, C32, C64],
                inputs: [a], outputs: [pinv], rule: recombine,
                support: |_op| list(&[ok(PINV)]),
                methods: {
                    /// Moore–Penrose pseudo-inverse (default thresholds).
                    ///
                    /// # Errors
                    /// Shape errors; non-finite input; a result beyond the dtype's range (`OutOfRange`).
                    fn pinv -> pinv;
                    /// Pseudo-inverse treating s ≤ rtol·s₀ as zero.
                    ///
                    /// # Errors
                    /// As `pinv`, plus an invalid `rtol`.
                    fn pinv_with_rtol(rtol: f64) -> pinv = Pinv(PinvOptions::default().rtol(rtol));
                },
            }
            /// Numerical rank: `a` → `rank`.
            MatrixRank {
                name: "matrix_rank", family: "op-recombine", dtypes: [F32, F64, C32, C64],
                inputs: [a], outputs: [rank], rule: recombine,
                support: |_op| list(&[INT]),
                methods: {
                    /// The numerical rank of each matrix (an i64 per batch item): the
                    /// number of singular values s_i > max(atol, rtol·s₀), rtol
                    /// defaulting to max(m, n)·ε of the dtype, as pinv and lstsq count
                    /// it (and numpy's `matrix_rank`).
                    ///
                    /// # Errors
                    /// Shape errors; invalid thresholds; non-finite input; a result beyond the dtype's range
                    /// (`OutOfRange`).
                    fn matrix_rank -> rank;
                    /// The numerical rank under explicit thresholds.
                    ///
                    /// # Errors
                    /// As `matrix_rank`.
                    fn matrix_rank_with_options(options: PinvOptions) -> rank = MatrixRank(options);
                },
            }
            /// Minimum-norm least squares: `a`, `b` → `x`, `rank`.
            Lstsq {
                name: "lstsq", family: "op-recombine", dtypes: [F32, F64, C32, C64],
                inputs: [a, b], outputs: [x, rank], rule: recombine,
                support: |_op| list(&[ok(PINV), INT]),
                methods: {
                    /// Minimum-norm least squares `x = a⁺ b` (rank-deficient and wide
                    /// systems too).
                    ///
                    /// ```
                    /// use lindiff_cpu::prelude::*;
                    /// let mut la = Direct::new(Cpu::new());
                    /// // The line y = c₀ + c₁ t through (0, 1), (1, 3), (2, 5).
                    /// let a = la.tensor_row_major(3, 2, &[1.0, 0.0, 1.0, 1.0, 1.0, 2.0])?;
                    /// let y = la.tensor(&[3, 1], &[1.0, 3.0, 5.0])?;
                    /// let c = la.lstsq(&a, &y)?.to_vec::<f64>()?;
                    /// assert!((c[0] - 1.0).abs() < 1e-14 && (c[1] - 2.0).abs() < 1e-14);
                    /// # Ok::<(), Error>(())
                    /// ```
                    ///
                    /// # Errors
                    /// Shape errors; non-finite input; a result beyond the dtype's range (`OutOfRange`).
                    fn lstsq -> x;
                    /// Least squares with thresholds; returns `(x, rank)`.
                    ///
                    /// # Errors
                    /// As `lstsq`, plus invalid options.
                    fn lstsq_with_options(options: LstsqOptions) -> (x, rank) = Lstsq(options);
                },
            }
        }
    };
}

pub(crate) use op_table;
