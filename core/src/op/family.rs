//! Op families: the groups of ops that lindiff-core's cargo features
//! `op-svd`, `op-qr`, … (the names of lindiff-cpu's kernel families, whose
//! features turn these on) build. An op whose family is off keeps its name
//! and arity, but its shape inference is [`Error::Unsupported`] and its
//! derivative rules are not linked — firmware pays flash only for the ops it
//! runs. Every feature is on by default (`all-ops`).
//!
//! [`Error::Unsupported`]: crate::Error::Unsupported

/// The family of a [`LinalgOp`](super::LinalgOp) ([`LinalgOp::family`](super::LinalgOp::family)).
///
/// ```
/// use lindiff_core::op::{Svd, Cholesky};
/// use lindiff_core::LinalgOp;
/// let svd = LinalgOp::Svd(Svd::default()).family();
/// assert_eq!(svd.feature, "op-svd");
/// assert_eq!(LinalgOp::Cholesky(Cholesky).family().feature, "op-cholesky");
/// assert!(svd.built); // the default features build every family
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Family {
    /// lindiff-core's cargo feature that builds the family (`"op-svd"`, …).
    pub feature: &'static str,
    /// Whether that feature is on in this build.
    pub built: bool,
    /// Why the family's ops are unsupported when it is off, naming the
    /// feature (the `why` of their [`Error::Unsupported`](crate::Error::Unsupported)).
    pub why: &'static str,
}

/// Runs `$on` with `$op` bound to the payload of whichever variant `$self`
/// is and `$fam` to its [`Family`] when the family's feature is on, and
/// `$off` (with `$fam` bound) when it is off. Each arm tests its feature
/// with a literal `cfg!`, so a family that is off never reaches `$on` and
/// the linker drops what only `$on` calls. Every variant is named: a new op
/// does not compile without a family.
macro_rules! dispatch_family {
    ($self:expr, $op:ident, $fam:ident => $on:expr, else $off:expr) => {
        match $self {
            LinalgOp::Svd($op) => dispatch_family!(@ "op-svd", $fam, $on, $off),
            LinalgOp::SvdVals($op) => dispatch_family!(@ "op-svd", $fam, $on, $off),
            LinalgOp::SvdFull($op) => dispatch_family!(@ "op-svd", $fam, $on, $off),
            LinalgOp::SvdTruncated($op) => dispatch_family!(@ "op-svd", $fam, $on, $off),
            LinalgOp::SvdGaugeCheck($op) => dispatch_family!(@ "op-svd", $fam, $on, $off),
            LinalgOp::Qr($op) => dispatch_family!(@ "op-qr", $fam, $on, $off),
            LinalgOp::RankRevealingQr($op) => dispatch_family!(@ "op-qr", $fam, $on, $off),
            LinalgOp::HouseholderQrFactor($op) => dispatch_family!(@ "op-qr", $fam, $on, $off),
            LinalgOp::HouseholderQrAppend($op) => dispatch_family!(@ "op-qr", $fam, $on, $off),
            LinalgOp::HouseholderQrQ($op) => dispatch_family!(@ "op-qr", $fam, $on, $off),
            LinalgOp::HouseholderQrR($op) => dispatch_family!(@ "op-qr", $fam, $on, $off),
            LinalgOp::HouseholderQrApply($op) => dispatch_family!(@ "op-qr", $fam, $on, $off),
            LinalgOp::Eigh($op) => dispatch_family!(@ "op-eigh", $fam, $on, $off),
            LinalgOp::EighVals($op) => dispatch_family!(@ "op-eigh", $fam, $on, $off),
            LinalgOp::EighGaugeCheck($op) => dispatch_family!(@ "op-eigh", $fam, $on, $off),
            LinalgOp::Eig($op) => dispatch_family!(@ "op-eig", $fam, $on, $off),
            LinalgOp::EigVals($op) => dispatch_family!(@ "op-eig", $fam, $on, $off),
            LinalgOp::Cholesky($op) => dispatch_family!(@ "op-cholesky", $fam, $on, $off),
            LinalgOp::Lu($op) => dispatch_family!(@ "op-lu", $fam, $on, $off),
            LinalgOp::LuFactor($op) => dispatch_family!(@ "op-lu", $fam, $on, $off),
            LinalgOp::LuFactorSolve($op) => dispatch_family!(@ "op-lu", $fam, $on, $off),
            LinalgOp::LuSolvePrepared($op) => dispatch_family!(@ "op-lu", $fam, $on, $off),
            LinalgOp::FullPivLu($op) => dispatch_family!(@ "op-full-piv-lu", $fam, $on, $off),
            LinalgOp::FullPivLuFactor($op) => dispatch_family!(@ "op-full-piv-lu", $fam, $on, $off),
            LinalgOp::FullPivLuSolve($op) => dispatch_family!(@ "op-full-piv-lu", $fam, $on, $off),
            LinalgOp::FullPivLuSolvePrepared($op) => dispatch_family!(@ "op-full-piv-lu", $fam, $on, $off),
            LinalgOp::TriangularSolve($op) => dispatch_family!(@ "op-triangular-solve", $fam, $on, $off),
            LinalgOp::Det($op) => dispatch_family!(@ "op-det", $fam, $on, $off),
            LinalgOp::Slogdet($op) => dispatch_family!(@ "op-det", $fam, $on, $off),
            LinalgOp::Adjugate($op) => dispatch_family!(@ "op-det", $fam, $on, $off),
            LinalgOp::LowRankApprox($op) => dispatch_family!(@ "op-recombine", $fam, $on, $off),
            LinalgOp::Polar($op) => dispatch_family!(@ "op-recombine", $fam, $on, $off),
            LinalgOp::Pinv($op) => dispatch_family!(@ "op-recombine", $fam, $on, $off),
            LinalgOp::Lstsq($op) => dispatch_family!(@ "op-recombine", $fam, $on, $off),
        }
    };
    (@ $feature:literal, $fam:ident, $on:expr, $off:expr) => {{
        #[allow(unused_variables)]
        let $fam = $crate::op::Family {
            feature: $feature,
            built: cfg!(feature = $feature),
            why: concat!("its op family is not in this build (lindiff-core's `", $feature, "` feature)"),
        };
        if cfg!(feature = $feature) {
            $on
        } else {
            $off
        }
    }};
}
