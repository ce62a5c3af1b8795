//! `LinalgOp`: every linear-algebra operation lindiff knows, with its options.
//!
//! Each op lives in one file that says everything core knows about it: its
//! input and output names, `infer` (output dtypes and shapes, or a typed error)
//! and `prune` (a cheaper op when only some outputs are used). Derivative rules
//! live in `ad/` and refer to these ops by variant.
//!
//! Output conventions shared by every provider:
//! * SVD returns Vᴴ (not V); singular values are real and descending; the
//!   largest-magnitude entry of each column of U is real and positive (V
//!   compensates).
//! * QR: diag(R) is real and ≥ 0.
//! * eigh: eigenvalues real and ascending; reads the lower triangle only and
//!   ignores the imaginary part of the diagonal (Cholesky too). Eigenvectors
//!   follow the same phase rule as U.
//! * eig: eigenvectors have unit 2-norm, largest-magnitude entry real and
//!   positive.
//! * LU: `P A = L U` with L unit lower triangular; permutations are `i64`
//!   vectors `perm` with `(P A)[i, :] = A[perm[i], :]` (and, for column
//!   permutations, `(A Q)[:, j] = A[:, perm[j]]`).

#[macro_use]
mod family;
pub mod check;
mod cholesky;
mod det;
mod eig;
mod eigh;
mod full_piv_lu;
mod gauge_check;
mod householder;
mod lu;
mod qr;
mod recombine;
mod svd;
mod triangular_solve;

pub use cholesky::Cholesky;
pub use det::{Adjugate, Det, Slogdet};
pub use eig::{Eig, EigVals};
pub use eigh::{Eigh, EighOptions, EighVals};
pub use family::Family;
pub use full_piv_lu::{FullPivLu, FullPivLuFactor, FullPivLuSolve, FullPivLuSolvePrepared};
pub use gauge_check::{why as gauge_why, EighGaugeCheck, GaugeOf, SvdGaugeCheck};
pub use householder::{
    HouseholderQrAppend, HouseholderQrApply, HouseholderQrFactor, HouseholderQrQ, HouseholderQrR,
};
pub use lu::{Lu, LuFactor, LuFactorSolve, LuSolvePrepared};
pub use qr::{Qr, QrMode, QrOptions, RankRevealingQr, RankRevealingQrOptions};
pub use recombine::{LowRankApprox, Lstsq, LstsqOptions, Pinv, PinvOptions, Polar, Truncation};
pub use svd::{Svd, SvdDriver, SvdFull, SvdOptions, SvdTruncated, SvdVals, SvdVectors};
pub use triangular_solve::{Diagonal, Side, Triangle, TriangularSolve, TriangularSolveOptions};

use crate::error::{Error, Result};
use crate::tensor::TensorMeta;

/// Most inputs any op takes: 6 for [`SvdGaugeCheck`] (the three SVD
/// factors and their three cotangents); every other op takes at most 4.
/// Every fixed-capacity list of op inputs (tapes, programs, batch plans) is
/// sized by this.
pub const MAX_INPUTS: usize = 6;
/// Most outputs any op produces.
pub const MAX_OUTPUTS: usize = 4;

/// The inferred outputs of an op: one entry per output, `None` for an output
/// the op's options switch off (e.g. Vᴴ of an SVD asked for U only).
pub type Outputs = heapless::Vec<Option<TensorMeta>, MAX_OUTPUTS>;

/// Which outputs of an op are used (a bit per output index).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Live(u8);

impl Live {
    /// No output used.
    pub const NONE: Live = Live(0);

    /// The first `count` outputs used.
    pub const fn all(count: usize) -> Live {
        if count >= 8 {
            Live(u8::MAX)
        } else {
            Live(((1u16 << count) - 1) as u8)
        }
    }

    /// Exactly the listed outputs used (indices ≥ 8 are ignored).
    pub fn of(indices: &[usize]) -> Live {
        Live(indices.iter().filter(|&&i| i < 8).fold(0, |m, &i| m | (1 << i)))
    }

    /// Marks output `i` used.
    pub const fn with(self, i: usize) -> Live {
        if i < 8 {
            Live(self.0 | (1 << i))
        } else {
            self
        }
    }

    /// `true` when output `i` is used.
    pub const fn contains(self, i: usize) -> bool {
        i < 8 && self.0 & (1 << i) != 0
    }
}

/// How a matrix operand is applied: as is, transposed, or conjugate-transposed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum MatOp {
    /// `A`.
    #[default]
    Identity,
    /// `Aᵀ`.
    Transpose,
    /// `Aᴴ` (equal to `Aᵀ` for real matrices).
    Adjoint,
}

/// What one file says about one op. Crate-private: callers go through
/// [`LinalgOp::infer`], which checks the arity first.
pub(crate) trait OpSpec {
    /// The op's name as used in messages (`"svd"`, `"lu_factor_solve"`, …).
    const NAME: &'static str;
    /// Input names, in order.
    const INPUTS: &'static [&'static str];
    /// Output names, in order.
    const OUTPUTS: &'static [&'static str];

    /// Output metas for these inputs (arity already checked).
    ///
    /// # Errors
    /// A typed [`Error`] naming op, argument and shape for any input the op
    /// cannot take.
    fn infer(&self, inputs: &[&TensorMeta]) -> Result<Outputs>;

    /// A cheaper op computing every output in `live` the same way, if any.
    fn prune(&self, _live: Live) -> Option<LinalgOp> {
        None
    }
}

/// Every linear-algebra operation. See each payload type for its inputs,
/// outputs and options.
#[non_exhaustive]
#[derive(Clone, Debug, PartialEq)]
pub enum LinalgOp {
    /// Thin SVD: `a` → `u`, `s`, `vh`.
    Svd(Svd),
    /// Singular values only: `a` → `s`.
    SvdVals(SvdVals),
    /// Full SVD: `a` → `u` (m×m), `s`, `vh` (n×n).
    SvdFull(SvdFull),
    /// Truncated thin SVD, rank from the data, masked to static shapes:
    /// `a` → `u`, `s`, `vh`, `rank`.
    SvdTruncated(SvdTruncated),
    /// Unpivoted Householder QR: `a` → `q`, `r`.
    Qr(Qr),
    /// Column-pivoted QR with numerical rank: `a` → `q`, `r`, `perm`, `rank`.
    RankRevealingQr(RankRevealingQr),
    /// Compact Householder QR: `a` → `h`, `tau`.
    HouseholderQrFactor(HouseholderQrFactor),
    /// Incremental QR: `h`, `tau`, `b` → `h`, `tau` of `[a b]`.
    HouseholderQrAppend(HouseholderQrAppend),
    /// Thin Q from compact reflectors: `h`, `tau` → `q`.
    HouseholderQrQ(HouseholderQrQ),
    /// R from compact reflectors: `h` → `r`.
    HouseholderQrR(HouseholderQrR),
    /// Q or Qᴴ applied to a block: `h`, `tau`, `b` → `y`.
    HouseholderQrApply(HouseholderQrApply),
    /// Hermitian eigendecomposition: `a` → `w`, `v`.
    Eigh(Eigh),
    /// Hermitian eigenvalues only: `a` → `w`.
    EighVals(EighVals),
    /// General eigendecomposition: `a` → `w`, `v` (complex).
    Eig(Eig),
    /// General eigenvalues only: `a` → `w` (complex).
    EigVals(EigVals),
    /// Cholesky: `a` → `l`.
    Cholesky(Cholesky),
    /// Partial-pivot LU: `a` → `perm`, `l`, `u`.
    Lu(Lu),
    /// Packed partial-pivot LU: `a` → `lu`, `perm`.
    LuFactor(LuFactor),
    /// Fused solve: `a`, `b` → `x`, `lu`, `perm`.
    LuFactorSolve(LuFactorSolve),
    /// Solve with saved factors: `lu`, `perm`, `b` → `x`.
    LuSolvePrepared(LuSolvePrepared),
    /// Full-pivot LU: `a` → `row_perm`, `col_perm`, `l`, `u`.
    FullPivLu(FullPivLu),
    /// Packed full-pivot LU: `a` → `lu`, `row_perm`, `col_perm`.
    FullPivLuFactor(FullPivLuFactor),
    /// Fused full-pivot solve: `a`, `b` → `x`, `lu`, `row_perm`, `col_perm`.
    FullPivLuSolve(FullPivLuSolve),
    /// Full-pivot solve with saved factors: `lu`, `row_perm`, `col_perm`, `b` → `x`.
    FullPivLuSolvePrepared(FullPivLuSolvePrepared),
    /// Triangular solve: `a`, `b` → `x`.
    TriangularSolve(TriangularSolve),
    /// Determinant: `a` → `det`.
    Det(Det),
    /// Sign and log-modulus of the determinant: `a` → `sign`, `logabsdet`.
    Slogdet(Slogdet),
    /// Adjugate (the derivative of the determinant): `a` → `adj`.
    Adjugate(Adjugate),
    /// Best rank-p approximation: `a` → `a_p`, `rank`.
    LowRankApprox(LowRankApprox),
    /// Polar factor U Vᴴ: `a` → `w`.
    Polar(Polar),
    /// Moore–Penrose pseudo-inverse: `a` → `pinv`.
    Pinv(Pinv),
    /// Minimum-norm least squares: `a`, `b` → `x`, `rank`.
    Lstsq(Lstsq),
    /// Reverse mode's gauge check of SVD cotangents: `u`, `s`, `vh`, `gu`,
    /// `gs`, `gvh` → `gu`, `gs`, `gvh` (unchanged, or an error).
    SvdGaugeCheck(SvdGaugeCheck),
    /// Reverse mode's gauge check of eigh cotangents: `v`, `w`, `gw`, `gv` →
    /// `gw`, `gv` (unchanged, or an error).
    EighGaugeCheck(EighGaugeCheck),
}

/// Runs `$body` with `$op` bound to the payload of whichever variant `$self` is.
macro_rules! dispatch {
    ($self:expr, $op:ident => $body:expr) => {
        match $self {
            LinalgOp::Svd($op) => $body,
            LinalgOp::SvdVals($op) => $body,
            LinalgOp::SvdFull($op) => $body,
            LinalgOp::SvdTruncated($op) => $body,
            LinalgOp::Qr($op) => $body,
            LinalgOp::RankRevealingQr($op) => $body,
            LinalgOp::HouseholderQrFactor($op) => $body,
            LinalgOp::HouseholderQrAppend($op) => $body,
            LinalgOp::HouseholderQrQ($op) => $body,
            LinalgOp::HouseholderQrR($op) => $body,
            LinalgOp::HouseholderQrApply($op) => $body,
            LinalgOp::Eigh($op) => $body,
            LinalgOp::EighVals($op) => $body,
            LinalgOp::Eig($op) => $body,
            LinalgOp::EigVals($op) => $body,
            LinalgOp::Cholesky($op) => $body,
            LinalgOp::Lu($op) => $body,
            LinalgOp::LuFactor($op) => $body,
            LinalgOp::LuFactorSolve($op) => $body,
            LinalgOp::LuSolvePrepared($op) => $body,
            LinalgOp::FullPivLu($op) => $body,
            LinalgOp::FullPivLuFactor($op) => $body,
            LinalgOp::FullPivLuSolve($op) => $body,
            LinalgOp::FullPivLuSolvePrepared($op) => $body,
            LinalgOp::TriangularSolve($op) => $body,
            LinalgOp::Det($op) => $body,
            LinalgOp::Slogdet($op) => $body,
            LinalgOp::Adjugate($op) => $body,
            LinalgOp::LowRankApprox($op) => $body,
            LinalgOp::Polar($op) => $body,
            LinalgOp::Pinv($op) => $body,
            LinalgOp::Lstsq($op) => $body,
            LinalgOp::SvdGaugeCheck($op) => $body,
            LinalgOp::EighGaugeCheck($op) => $body,
        }
    };
}

/// `T::NAME` of a value (for the dispatch macros of ops and primitives).
pub(crate) fn name_of<T: OpSpec>(_: &T) -> &'static str {
    T::NAME
}
/// `T::INPUTS` of a value.
pub(crate) fn inputs_of<T: OpSpec>(_: &T) -> &'static [&'static str] {
    T::INPUTS
}
/// `T::OUTPUTS` of a value.
pub(crate) fn outputs_of<T: OpSpec>(_: &T) -> &'static [&'static str] {
    T::OUTPUTS
}

impl LinalgOp {
    /// The op's name as used in messages.
    pub fn name(&self) -> &'static str {
        dispatch!(self, op => name_of(op))
    }

    /// Input names, in order.
    pub fn input_names(&self) -> &'static [&'static str] {
        dispatch!(self, op => inputs_of(op))
    }

    /// Output names, in order.
    pub fn output_names(&self) -> &'static [&'static str] {
        dispatch!(self, op => outputs_of(op))
    }

    /// The op's family: lindiff-core's cargo feature that builds it and
    /// whether it is on (see [`Family`]).
    pub fn family(&self) -> Family {
        dispatch_family!(self, _op, fam => fam, else fam)
    }

    /// Number of inputs.
    pub fn input_count(&self) -> usize {
        self.input_names().len()
    }

    /// Number of outputs.
    pub fn output_count(&self) -> usize {
        self.output_names().len()
    }

    /// Output dtypes and shapes for these inputs.
    ///
    /// # Errors
    /// [`Error::Arity`] for a wrong input count; [`Error::Unsupported`]
    /// naming the op and the feature when its [`Family`] is not in this
    /// build; otherwise the op's typed shape/dtype error, naming op,
    /// argument and shape.
    ///
    /// ```
    /// use lindiff_core::{DType, LinalgOp, Shape, TensorMeta, op::Det};
    /// let a = TensorMeta::new(DType::F64, Shape::new(&[2, 3]).unwrap());
    /// let err = LinalgOp::Det(Det).infer(&[&a]).unwrap_err();
    /// assert_eq!(err.to_string(), "det: argument `a` must be square, got 2×3");
    /// ```
    pub fn infer(&self, inputs: &[&TensorMeta]) -> Result<Outputs> {
        if inputs.len() != self.input_count() {
            return Err(Error::Arity { op: self.name(), expected: self.input_count(), got: inputs.len() });
        }
        dispatch_family!(self, op, fam => op.infer(inputs), else Err(Error::Unsupported {
            op: self.name(),
            provider: "lindiff-core",
            why: fam.why,
        }))
    }

    /// A cheaper op when only the outputs in `live` are used, if one exists.
    ///
    /// Pruned ops compute the live outputs with the same kernels' contract
    /// (e.g. `Svd` with only `s` live becomes `SvdVals`, whose values may
    /// differ from `Svd`'s in the last bit). Fused solves are never pruned.
    pub fn prune(&self, live: Live) -> Option<LinalgOp> {
        dispatch_family!(self, op, _fam => op.prune(live), else None)
    }
}
