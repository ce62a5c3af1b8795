//! The decompositions, solves and composites as methods of [`Var`]: one per
//! `fn` line of the op table (`op/table.rs`), with the op's first input as
//! the receiver and the others as arguments, and the composites of
//! [`Linalg`](crate::Linalg).

use super::Var;
use crate::error::Error;
use crate::face::{
    EigFactors, EighFactors, Face, FullPivLuFactors, HouseholderQr, Linalg, LuFactors, QrFactors,
    RankRevealingQrFactors, SvdFactors, SvdTruncatedFactors,
};
use crate::face::{Norm, VanderOrder};
// The op table names payloads and options: every op type in scope.
use crate::op::*;
use crate::provider::Op;

/// The output called `name` of an op whose outputs are `names`, from the
/// handles `outs` (an error handle where the output is absent).
fn output<F: Face>(
    from: &Var<F>,
    outs: &mut [Option<Var<F>>],
    op: &'static str,
    names: &[&'static str],
    name: &'static str,
) -> Var<F> {
    let found = names.iter().position(|&n| n == name).and_then(|i| outs.get_mut(i)).and_then(Option::take);
    found.unwrap_or_else(|| {
        from.wrap(Err(Error::Buffer { op, arg: name, why: "was not produced by the op", needed: 1, got: 0 }))
    })
}

/// The handle methods of each op table entry (see `face/ops.rs` for the
/// face methods made from the same lines).
macro_rules! var_methods {
    ($(
        $(#[$doc:meta])*
        $V:ident {
            name: $name:literal, family: $family:literal, dtypes: $dtypes:tt,
            inputs: [$first:ident $(, $input:ident)*], outputs: $outputs:tt, rule: $rule:ident,
            support: |$op:ident| $support:expr,
            methods: { $($methods:tt)* },
        }
    )*) => {
        impl<F: Face> Var<F> {
            $( var_methods!(@each $V [$first $(, $input)*] $($methods)*); )*
        }
    };
    (@each $V:ident $inputs:tt) => {};
    (@each $V:ident [$first:ident $(, $input:ident)*]
        $(#[$doc:meta])* fn $method:ident $(($($arg:ident: $ty:ty),*))? -> ($($out:ident),+)
        $(= $payload:expr)?; $($rest:tt)*
    ) => {
        $(#[$doc])*
        pub fn $method(&self, $($input: &Var<F>,)* $($($arg: $ty),*)?) -> ($(var_methods!(@var $out),)+) {
            let mut outs = var_methods!(@run self $V [$($input),*] $($payload)?);
            ($(output(self, &mut outs, $V::NAME, $V::OUTPUTS, stringify!($out)),)+)
        }
        var_methods!(@each $V [$first $(, $input)*] $($rest)*);
    };
    (@each $V:ident [$first:ident $(, $input:ident)*]
        $(#[$doc:meta])* fn $method:ident $(($($arg:ident: $ty:ty),*))? -> $S:ident { $($out:ident),+ }
        $(= $payload:expr)?; $($rest:tt)*
    ) => {
        $(#[$doc])*
        pub fn $method(&self, $($input: &Var<F>,)* $($($arg: $ty),*)?) -> $S<Var<F>> {
            let mut outs = var_methods!(@run self $V [$($input),*] $($payload)?);
            $S { $($out: output(self, &mut outs, $V::NAME, $V::OUTPUTS, stringify!($out)),)+ }
        }
        var_methods!(@each $V [$first $(, $input)*] $($rest)*);
    };
    (@each $V:ident [$first:ident $(, $input:ident)*]
        $(#[$doc:meta])* fn $method:ident $(($($arg:ident: $ty:ty),*))? -> $out:ident
        $(= $payload:expr)?; $($rest:tt)*
    ) => {
        $(#[$doc])*
        pub fn $method(&self, $($input: &Var<F>,)* $($($arg: $ty),*)?) -> Var<F> {
            let mut outs = var_methods!(@run self $V [$($input),*] $($payload)?);
            output(self, &mut outs, $V::NAME, $V::OUTPUTS, stringify!($out))
        }
        var_methods!(@each $V [$first $(, $input)*] $($rest)*);
    };
    (@var $out:ident) => { Var<F> };
    (@run $self:ident $V:ident [$($input:ident),*]) => {
        $self.apply(Op::Linalg(LinalgOp::$V(<$V as Default>::default())), &[$($input),*])
    };
    (@run $self:ident $V:ident [$($input:ident),*] $payload:expr) => {
        $self.apply(Op::Linalg(LinalgOp::$V($payload)), &[$($input),*])
    };
}

crate::op::op_table!(var_methods);

impl<F: Face> Var<F> {
    /// The inverse (the fused solve against the identity).
    ///
    /// ```
    /// use lindiff_cpu::prelude::*;
    /// let meta = TensorMeta::new(DType::F64, Shape::new(&[3, 3]).unwrap());
    /// let program = trace([meta], |[a]| a.inv().sum())?;
    /// # Ok::<(), Error>(())
    /// ```
    pub fn inv(&self) -> Var<F> {
        self.with_face(|f, a| f.inv(a))
    }

    /// A matrix or vector norm (see [`Norm`]).
    pub fn norm(&self, kind: Norm) -> Var<F> {
        self.with_face(|f, a| f.norm(a, kind))
    }

    /// The Frobenius norm ‖a‖_F.
    pub fn fro(&self) -> Var<F> {
        self.norm(Norm::Fro)
    }

    /// The condition number in a matrix norm.
    pub fn cond(&self, kind: Norm) -> Var<F> {
        self.with_face(|f, a| f.cond(a, kind))
    }

    /// `a^k` (k < 0 through the inverse).
    pub fn matrix_power(&self, k: i64) -> Var<F> {
        self.with_face(|f, a| f.matrix_power(a, k))
    }

    /// The Vandermonde matrix of a vector, `n` columns.
    pub fn vander(&self, n: usize, order: VanderOrder) -> Var<F> {
        self.with_face(|f, x| f.vander(x, n, order))
    }

    /// The inverse of a tensor seen as a matrix over its first `ind` dims.
    pub fn tensorinv(&self, ind: usize) -> Var<F> {
        self.with_face(|f, a| f.tensorinv(a, ind))
    }
}
