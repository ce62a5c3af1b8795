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

mod table;
pub(crate) use table::op_table;
pub mod check;
mod cholesky;
mod det;
mod eig;
mod eigh;
mod expm_factors;
mod family;
mod full_piv_lu;
mod funm;
mod funm_frechet;
mod householder;
pub mod internal;
mod lu;
mod matfun;
mod qr;
mod recombine;
mod singular;
mod svd;
mod triangular_solve;

pub use cholesky::Cholesky;
pub use det::{Adjugate, Det, Slogdet};
pub use eig::{Eig, EigVals};
pub use eigh::{Eigh, EighOptions, EighVals};
pub use expm_factors::{ExpmFactors, ExpmFrechetFactored, EXPM_TERMS};
pub use family::Family;
pub use full_piv_lu::{FullPivLu, FullPivLuFactor, FullPivLuSolve, FullPivLuSolvePrepared};
pub use funm::{FunmHermitian, FunmHermitianFactors, MatrixFunction, ScalarFunction};
pub(crate) use funm_frechet::NO_SECOND_DERIVATIVE;
pub use funm_frechet::{FunmHermitianFrechet, FunmHermitianSecond};
pub use householder::{
    HouseholderQrAppend, HouseholderQrApply, HouseholderQrFactor, HouseholderQrQ, HouseholderQrR,
};
pub use lu::{Lu, LuFactor, LuFactorSolve, LuSolvePrepared};
pub use matfun::{Expm, ExpmFrechet, Logm, LogmFrechet, Sqrtm, SqrtmFrechet};
pub use qr::{Qr, QrMode, QrOptions, RankRevealingQr, RankRevealingQrOptions};
pub use recombine::{LowRankApprox, Lstsq, LstsqOptions, MatrixRank, Pinv, PinvOptions, Polar, Truncation};
pub use singular::{SingularCheck, SolveOptions};
pub use svd::{Svd, SvdDriver, SvdFull, SvdOptions, SvdTruncated, SvdVals, SvdVectors};
pub use triangular_solve::{Diagonal, PivotCheck, Side, Triangle, TriangularSolve, TriangularSolveOptions};

use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::tensor::TensorMeta;

/// Most inputs any op takes: 6 for the internal SVD gauge check
/// ([`internal::SvdGaugeCheck`]: the three SVD factors and their three
/// cotangents); every op of [`LinalgOp`] takes at most 5.
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

/// What an op's own file says about it. Crate-private: callers go through
/// [`LinalgOp::infer`], which checks the arity and the family first. The
/// op's name, inputs and outputs are the table's (`table.rs`), as inherent
/// constants `NAME`, `INPUTS`, `OUTPUTS` of the payload.
pub(crate) trait OpSpec {
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

/// Expands the op table (`table.rs`) into [`LinalgOp`], the payloads'
/// declared constants and conversions, and the accessors of [`LinalgOp`].
macro_rules! linalg_op_enum {
    ($(
        $(#[$doc:meta])*
        $V:ident {
            name: $name:literal, family: $family:literal, dtypes: [$($dt:ident),*],
            inputs: [$($input:ident),*], outputs: [$($output:ident),*], rule: $rule:ident,
            support: |$op:ident| $support:expr,
            methods: $methods:tt,
        }
    )*) => {
        /// Every linear-algebra operation, one variant per entry of the op
        /// table. See each payload type for its inputs, outputs and options.
        #[derive(Clone, Debug, PartialEq)]
        pub enum LinalgOp {
            $( $(#[$doc])* $V($V), )*
        }

        $(
            impl $V {
                /// The op's name as used in messages.
                pub const NAME: &'static str = $name;
                /// Input names, in order.
                pub const INPUTS: &'static [&'static str] = &[$(stringify!($input)),*];
                /// Output names, in order.
                pub const OUTPUTS: &'static [&'static str] = &[$(stringify!($output)),*];
            }

            impl From<$V> for LinalgOp {
                fn from(op: $V) -> LinalgOp {
                    LinalgOp::$V(op)
                }
            }

        )*

        impl LinalgOp {
            /// Every op, with default options, in table order.
            pub fn all() -> impl Iterator<Item = LinalgOp> {
                [$( LinalgOp::$V($V::default()) ),*].into_iter()
            }

            /// The op's name as used in messages.
            pub fn name(&self) -> &'static str {
                match self { $( LinalgOp::$V(_) => $name, )* }
            }

            /// Input names, in order.
            pub fn input_names(&self) -> &'static [&'static str] {
                match self { $( LinalgOp::$V(_) => $V::INPUTS, )* }
            }

            /// Output names, in order.
            pub fn output_names(&self) -> &'static [&'static str] {
                match self { $( LinalgOp::$V(_) => $V::OUTPUTS, )* }
            }

            /// The dtypes the op's first argument may have.
            pub fn dtypes(&self) -> &'static [DType] {
                match self { $( LinalgOp::$V(_) => &[$(DType::$dt),*], )* }
            }

            /// The op's family: lindiff-core's cargo feature that builds it and
            /// whether it is on (see [`Family`]).
            pub fn family(&self) -> Family {
                match self { $( LinalgOp::$V(_) => Family {
                    feature: $family,
                    built: cfg!(feature = $family),
                    why: concat!("its op family is not in this build (lindiff-core's `", $family, "` feature)"),
                }, )* }
            }

            /// Output dtypes and shapes for these inputs (arity checked).
            fn infer_checked(&self, inputs: &[&TensorMeta]) -> Result<Outputs> {
                match self {
                    $( LinalgOp::$V(op) if cfg!(feature = $family) => op.infer(inputs), )*
                    _ => Err(Error::Unsupported { op: self.name(), provider: "lindiff-core", why: self.family().why }),
                }
            }

            /// A cheaper op when only the outputs in `live` are used.
            fn prune_built(&self, live: Live) -> Option<LinalgOp> {
                match self {
                    $( LinalgOp::$V(op) if cfg!(feature = $family) => op.prune(live), )*
                    _ => None,
                }
            }
        }
    };
}

op_table!(linalg_op_enum);

impl LinalgOp {
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
    /// let shape = Shape::new(&[2, 3]).map_err(|_| "more dims than MAX_RANK")?;
    /// let a = TensorMeta::new(DType::F64, shape);
    /// let err = LinalgOp::Det(Det).infer(&[&a]).unwrap_err();
    /// assert_eq!(err.to_string(), "det: argument `a` must be square, got 2×3");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn infer(&self, inputs: &[&TensorMeta]) -> Result<Outputs> {
        if inputs.len() != self.input_count() {
            return Err(Error::Arity { op: self.name(), expected: self.input_count(), got: inputs.len() });
        }
        self.infer_checked(inputs)
    }

    /// A cheaper op when only the outputs in `live` are used, if one exists.
    ///
    /// Pruned ops compute the live outputs with the same kernels' contract
    /// (e.g. `Svd` with only `s` live becomes `SvdVals`, whose values may
    /// differ from `Svd`'s in the last bit). Fused solves are never pruned.
    pub fn prune(&self, live: Live) -> Option<LinalgOp> {
        self.prune_built(live)
    }

    /// For a values-only spectral op (`SvdVals`, `EighVals`, `EigVals`),
    /// the decomposition with vectors and the index of its values output;
    /// for `FunmHermitian` and `Expm`, the op that also returns what its
    /// rule reads.
    ///
    /// The rule of a values-only op needs the vectors, so reverse mode
    /// runs this op in the forward pass instead whenever the input is
    /// differentiated (both faces alike): one decomposition rather than a
    /// values-only one and a full one in the rule. Its values may differ
    /// from the values-only op's in the last bit, as with [`prune`](Self::prune).
    pub fn with_vectors(&self) -> Option<(LinalgOp, usize)> {
        match self {
            LinalgOp::SvdVals(vals) => Some((LinalgOp::Svd(Svd(vals.0.vectors(SvdVectors::Both))), 1)),
            LinalgOp::EighVals(vals) => Some((LinalgOp::Eigh(Eigh(vals.0)), 0)),
            LinalgOp::EigVals(_) => Some((LinalgOp::Eig(Eig), 0)),
            LinalgOp::FunmHermitian(f) => {
                Some((LinalgOp::FunmHermitianFactors(FunmHermitianFactors(f.0)), 0))
            }
            LinalgOp::Expm(_) => Some((LinalgOp::ExpmFactors(ExpmFactors), 0)),
            _ => None,
        }
    }
}
