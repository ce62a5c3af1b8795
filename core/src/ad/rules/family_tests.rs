//! The op-family features: in every feature configuration, differentiating
//! an op gives a gradient program where its family is built (with every op
//! its rule records: the features' dependencies), and an
//! `Error::Unsupported` naming the op and the feature where it is not —
//! never a zero or a panic; `ad_support` says the same. `cargo test -p
//! lindiff-core` runs the first case for every family; `cargo xtask
//! embedded` runs this module with the firmware's families (`op-svd`,
//! `op-lu`, `op-cholesky`), which leave eigh out.

use crate::ad::{ad_support, ad_support_ops, grad, Support};
use crate::error::{Error, Result};
use crate::ir::{Builder, Program};
use crate::prim::{ReduceOp, UnaryOp};
use crate::provider::Op;
use crate::{DType, Face, Ops, Shape, TensorMeta};

type Prog = Program<32, 64>;

/// ∂/∂a of Σ |first output of `f(a)`|² for a 3×3 f64 `a`.
fn grad_of(
    f: impl FnOnce(&mut Builder<32, 64>, &crate::ir::ValueId) -> Result<crate::ir::ValueId>,
) -> Result<Prog> {
    let mut b = Builder::with_capacity();
    let a = b.param(TensorMeta::new(DType::F64, Shape::new(&[3, 3])?))?;
    let y = f(&mut b, &a)?;
    let sq = b.unary(UnaryOp::Abs2, &y)?;
    let rank = b.meta(&sq).shape.rank();
    let loss = b.reduce(ReduceOp::Sum, &sq, rank)?;
    grad(&b.finish(&[&loss])?, &[0])
}

/// One op of each of four families: (op name, feature, its gradient).
fn cases() -> [(&'static str, &'static str, Result<Prog>); 4] {
    [
        ("svd_vals", "op-svd", grad_of(|b, a| b.svd_vals(a))),
        ("eigh", "op-eigh", grad_of(|b, a| Ok(b.eigh(a)?.w))),
        ("cholesky", "op-cholesky", grad_of(|b, a| b.cholesky(a))),
        // The rules of lu and cholesky record triangular solves.
        ("lu", "op-lu", grad_of(|b, a| Ok(b.lu(a)?.u))),
    ]
}

#[test]
fn a_left_out_family_is_unsupported_naming_op_and_feature() {
    for (name, feature, result) in cases() {
        let built = match feature {
            "op-svd" => cfg!(feature = "op-svd"),
            "op-eigh" => cfg!(feature = "op-eigh"),
            "op-cholesky" => cfg!(feature = "op-cholesky"),
            _ => cfg!(feature = "op-lu"),
        };
        match (built, result) {
            (true, Ok(program)) => assert_eq!(program.results().len(), 2, "{name}"),
            (false, Err(Error::Unsupported { op, provider: "lindiff-core", why })) => {
                assert_eq!(op, name);
                assert!(why.contains(feature), "{name}: {why}");
            }
            (built, other) => panic!("{name} (built: {built}): {:?}", other.map(|p| p.results().len())),
        }
    }
}

#[test]
fn ad_support_says_what_the_rules_do() {
    for op in ad_support_ops() {
        let Op::Linalg(l) = &op else { continue };
        let f = l.family();
        let left_out = ad_support(&op).iter().all(|(_, s)| *s == Support::Unsupported { why: f.why });
        assert_eq!(left_out, !f.built, "{} ({})", op.name(), f.feature);
    }
}
