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
