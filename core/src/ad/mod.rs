//! Automatic differentiation: one set of rules, run by every face.
//!
//! A rule ([`rules`]) is a JVP written against a [`Cx`]: it computes what it
//! needs from primal values on `cx.primal()` and records the tangent map
//! through [`Lin`], as ops linear in their tangent arguments. Forward mode
//! runs those ops ([`Dual`]); reverse mode records them and runs their
//! transpose — linearize, then transpose — so no op has a second,
//! hand-written VJP.

mod cx;
mod dual;
mod eager;
pub mod linear;
pub mod local;
pub mod rules;
mod support;
mod traced;
mod transpose;
#[cfg(feature = "alloc")]
mod truncated;
mod vjp;

pub use cx::{Arg, Cx, Tangent};
pub use dual::{Dual, DualTensor, Forward};
pub use eager::{Eager, Tracked};
pub use linear::Lin;
pub use rules::{Primals, Tangents};
pub use support::{ad_support, ad_support_ops, ad_support_second_order, ad_support_table, Support};
pub use traced::{grad, hvp, jvp, vjp};
pub use transpose::{transpose, Cotangents, TArg};
