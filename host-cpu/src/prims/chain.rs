//! The kernel of the internal [`Chain`]: a compiled plan's elementwise
//! steps in one pass. Over contiguous inputs it runs block by block: each
//! link fills a block of [`BLOCK`] values from its operands' blocks (a loop
//! per link that vectorizes, as the primitive's would), and the last link's
//! block is the output's. Other layouts take the strided walk, one element
//! at a time. Each link computes exactly what its primitive computes
//! (`elementwise.rs`), so the bits are the same.

use super::strided::{self, View};
use crate::field::Field;
use core::mem::MaybeUninit;
use lindiff_core::op::internal::{Chain, LinkOp, Operand, MAX_LINKS};
use lindiff_core::op::MAX_INPUTS;
use lindiff_core::{Host, Input, Output, Result, Scalar};

/// Values per block: the blocks of all links stay in L1.
const BLOCK: usize = 64;

/// `y` = the chain's last link over `inputs` (equal dtype `T` and shape,
/// checked by `call`).
pub(super) fn chain<T: Field>(
    op: &Chain,
    inputs: &[Input<'_, Host>],
    out: &mut Output<'_, '_, Host>,
) -> Result<()> {
    const NAME: &str = Chain::NAME;
    let names = op.input_names();
    let mut xs = heapless::Vec::<&[T], MAX_INPUTS>::new();
    let mut flat = heapless::Vec::<&[T], MAX_INPUTS>::new();
    for (input, &name) in inputs.iter().zip(names) {
        let x = strided::input::<T>(NAME, name, input)?;
        let _ = xs.push(x); // ≤ MAX_INPUTS, as the chain's inputs
        if let Some(c) = strided::contiguous(input.desc, x) {
            let _ = flat.push(c);
        }
    }
    if flat.len() == xs.len() {
        blocks(op, &flat, strided::output::<T>(NAME, "y", out)?);
        // SAFETY: `blocks` wrote every element of the output.
        unsafe { strided::finish::<T>(out) };
        return Ok(());
    }
    // Any other layout: element by element through the walk.
    let mut views = [View::of(inputs[0].desc); MAX_INPUTS];
    for (view, input) in views.iter_mut().zip(inputs) {
        *view = View::of(input.desc);
    }
    strided::write_walk(NAME, "y", out, views, |p| {
        let mut values = [T::zero(); MAX_LINKS];
        for (k, link) in op.links().enumerate() {
            let get = |o: Operand| match o {
                Operand::Input(i) => xs[usize::from(i)][p.offsets[usize::from(i)]],
                Operand::Link(j) => values[usize::from(j)],
            };
            values[k] = apply(link.op, get(link.a), || get(link.b));
        }
        values[op.len() - 1]
    })
}

/// One link on one element: exactly the primitive's arithmetic.
#[inline(always)]
fn apply<T: Scalar>(op: LinkOp, a: T, b: impl FnOnce() -> T) -> T {
    match op {
        LinkOp::Neg => -a,
        LinkOp::Conj => Scalar::conj(a),
        LinkOp::Add => a + b(),
        LinkOp::Sub => a - b(),
        LinkOp::Mul => a * b(),
        LinkOp::Div => a / b(),
        LinkOp::Scale(f) => a.scale(<T as Scalar>::Real::from_f64(f)),
    }
}

with_avx2! {
    /// [`blocks_body`], in AVX2 code where the CPU has it.
    #[inline(never)]
    fn blocks<T: Field>(op: &Chain, xs: &[&[T]], y: &mut [MaybeUninit<T>]) => blocks_body
}

/// The chain over contiguous inputs `xs` into `y` (all of it written),
/// [`BLOCK`] values at a time.
#[inline(always)]
fn blocks_body<T: Field>(op: &Chain, xs: &[&[T]], y: &mut [MaybeUninit<T>]) {
    let mut regs = [[T::zero(); BLOCK]; MAX_LINKS];
    for (start, dst) in (0..).step_by(BLOCK).zip(y.chunks_mut(BLOCK)) {
        let len = dst.len();
        for (k, link) in op.links().enumerate() {
            let (done, rest) = regs.split_at_mut(k);
            let r = &mut rest[0][..len];
            let operand = |o: Operand| -> &[T] {
                match o {
                    Operand::Input(i) => &xs[usize::from(i)][start..start + len],
                    Operand::Link(j) => &done[usize::from(j)][..len],
                }
            };
            let a = operand(link.a);
            match link.op {
                LinkOp::Neg => r.iter_mut().zip(a).for_each(|(r, &a)| *r = -a),
                LinkOp::Conj => r.iter_mut().zip(a).for_each(|(r, &a)| *r = Scalar::conj(a)),
                LinkOp::Scale(f) => {
                    let f = <T as Scalar>::Real::from_f64(f);
                    r.iter_mut().zip(a).for_each(|(r, &a)| *r = a.scale(f));
                }
                LinkOp::Add => zip2(r, a, operand(link.b), |a, b| a + b),
                LinkOp::Sub => zip2(r, a, operand(link.b), |a, b| a - b),
                LinkOp::Mul => zip2(r, a, operand(link.b), |a, b| a * b),
                LinkOp::Div => zip2(r, a, operand(link.b), |a, b| a / b),
            }
        }
        let last = &regs[op.len() - 1][..len];
        for (d, &v) in dst.iter_mut().zip(last) {
            d.write(v);
        }
    }
}

/// `r[i] = f(a[i], b[i])`.
#[inline(always)]
fn zip2<T: Scalar>(r: &mut [T], a: &[T], b: &[T], f: impl Fn(T, T) -> T) {
    for ((r, &a), &b) in r.iter_mut().zip(a).zip(b) {
        *r = f(a, b);
    }
}
