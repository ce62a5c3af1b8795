//! Host-memory kernels of the array primitives (`lindiff_core::prim`).
//! Written against host memory only, so any host-memory provider (the LAPACK
//! one, wasm, firmware) can share them.
//!
//! Inputs are read in place through their strides (a row-major matrix is a
//! view, not a copy); outputs are written contiguously in column-major order.
//! Matmul runs faer's GEMM per batch item; every other primitive is one
//! column-major walk over its output (`strided.rs`). Only a product whose
//! right-hand side it copies first needs workspace (`matmul.rs`), and
//! `run` allocates nothing (faer's GEMM itself may, see the crate docs).
//!
//! Reverse mode's internal `ValuesCheck` runs here too (`values_check`): a
//! pass over vectors, like the primitives, with the check itself shared with
//! the gauge-check kernels (`kernels::gauge_check`); and, in `std` builds,
//! the internal `Chain` of a compiled plan (`chain`: several elementwise
//! primitives in one pass). Firmware builds answer `Unsupported` for chains,
//! so their plans run the primitives one by one and link no chain kernel.

// A build without any dtype feature has no kernel to dispatch to.
#![cfg_attr(
    not(any(feature = "f32", feature = "f64", feature = "c32", feature = "c64")),
    allow(dead_code, unused_variables)
)]

#[cfg(feature = "std")]
mod chain;
mod constant;
mod diag;
mod elementwise;
mod extreme;
mod layout;
mod mask;
mod matmul;
mod spectral;
mod strided;

use crate::field::{with_field, Field};
use diag::Along;
use elementwise::Complexify;
use lindiff_core::op::internal::{Chain, TangentTieCheck, ValuesCheck};
use lindiff_core::{
    DType, Error, Exec, Host, HostBuffer, Input, Output, PrimOp, Result, TensorDesc, WorkspaceReq,
};

/// The dtype that selects the kernel: the first input's, or the constant's
/// (the output's for the rank mask, whose input is an integer).
fn dtype_of(op: &PrimOp, first_input: Option<&TensorDesc>) -> Option<DType> {
    match op {
        PrimOp::Fill(fill) => Some(fill.meta.dtype),
        PrimOp::Eye(eye) => Some(eye.dtype),
        // The input is an i64 count: the kernel is chosen by the output.
        PrimOp::RankMask(mask) => Some(mask.dtype),
        _ => first_input.map(|d| d.meta.dtype),
    }
}

fn no_input(op: &PrimOp) -> Error {
    Error::Arity { op: op.name(), expected: op.input_names().len(), got: 0 }
}

/// The workspace `run` needs for `op`: none, once the dtype has kernels in
/// this build, but for a product that copies its right-hand side
/// (`matmul::workspace`).
///
/// # Errors
/// [`Error::Unsupported`] for a dtype whose feature is off.
pub(crate) fn workspace(op: &PrimOp, inputs: &[&TensorDesc], _exec: Exec) -> Result<WorkspaceReq> {
    let dtype = dtype_of(op, inputs.first().copied()).ok_or_else(|| no_input(op))?;
    with_field!(op.name(), dtype, T => Ok(match op {
        PrimOp::Matmul(m) => matmul::workspace::<T>(m, inputs),
        _ => WorkspaceReq::EMPTY,
    }))
}

/// Runs `op`, writing every present output.
///
/// # Errors
/// [`Error::Unsupported`] for a dtype whose feature is off or a primitive
/// this build does not know; [`Error::Buffer`] for a buffer misaligned for
/// its dtype.
pub(crate) fn run(
    op: &PrimOp,
    inputs: &[Input<'_, Host>],
    outputs: &mut [Option<Output<'_, '_, Host>>],
    workspace: &mut HostBuffer<'_>,
    exec: Exec,
) -> Result<()> {
    let name = op.name();
    let dtype = dtype_of(op, inputs.first().map(|i| i.desc)).ok_or_else(|| no_input(op))?;
    // Every primitive has one output.
    let out = first_output(name, op.output_names()[0], outputs)?;
    with_field!(name, dtype, T => dispatch::<T>(op, inputs, out, workspace, exec))
}

/// The workspace of [`values_check`]: none, once the dtype has kernels in
/// this build.
///
/// # Errors
/// [`Error::Unsupported`] for a dtype whose feature is off.
pub(crate) fn values_check_workspace(inputs: &[&TensorDesc]) -> Result<WorkspaceReq> {
    values_check_built()?;
    let dtype = inputs.first().map(|d| d.meta.dtype).ok_or_else(|| values_check_arity(inputs.len()))?;
    with_field!(ValuesCheck::NAME, dtype, _Built => Ok(WorkspaceReq::EMPTY))
}

/// Runs the internal [`ValuesCheck`]: a pass over vectors of values, as
/// the primitives make (its check is the gauge checks', in
/// `kernels::gauge_check`).
///
/// # Errors
/// As [`run`]; the check's `Error::NotDifferentiable`.
pub(crate) fn values_check(
    op: &ValuesCheck,
    inputs: &[Input<'_, Host>],
    outputs: &mut [Option<Output<'_, '_, Host>>],
) -> Result<()> {
    values_check_built()?;
    let dtype = inputs.first().map(|i| i.desc.meta.dtype).ok_or_else(|| values_check_arity(inputs.len()))?;
    let out = first_output(ValuesCheck::NAME, "g", outputs)?;
    with_field!(ValuesCheck::NAME, dtype, T => spectral::values_check::<T>(op, inputs, out))
}

/// The workspace of [`tangent_tie_check`]: none, once `c`'s dtype has
/// kernels in this build.
///
/// # Errors
/// [`Error::Unsupported`] for a dtype whose feature is off.
pub(crate) fn tangent_tie_check_workspace(inputs: &[&TensorDesc]) -> Result<WorkspaceReq> {
    let c = inputs.get(1).ok_or(tangent_tie_check_arity(inputs.len()))?;
    with_field!(TangentTieCheck::NAME, c.meta.dtype, _Built => Ok(WorkspaceReq::EMPTY))
}

/// Runs forward mode's [`TangentTieCheck`]: a pass over the couplings at
/// the cut pairs of each spectrum.
///
/// # Errors
/// As [`run`]; the check's `Error::NotDifferentiable`.
pub(crate) fn tangent_tie_check(
    op: &TangentTieCheck,
    inputs: &[Input<'_, Host>],
    outputs: &mut [Option<Output<'_, '_, Host>>],
) -> Result<()> {
    let dtype = inputs.get(1).map(|i| i.desc.meta.dtype).ok_or(tangent_tie_check_arity(inputs.len()))?;
    let out = first_output(TangentTieCheck::NAME, "c", outputs)?;
    with_field!(TangentTieCheck::NAME, dtype, T => spectral::tangent_tie_check::<T>(op, inputs, out))
}

fn tangent_tie_check_arity(got: usize) -> Error {
    Error::Arity { op: TangentTieCheck::NAME, expected: TangentTieCheck::INPUTS.len(), got }
}

/// The check belongs to the SVD and eigh families: a build with neither
/// (`op-svd`, `op-eigh`) does not link it.
fn values_check_built() -> Result<()> {
    if cfg!(any(feature = "op-svd", feature = "op-eigh")) {
        return Ok(());
    }
    Err(Error::Unsupported {
        op: ValuesCheck::NAME,
        provider: "cpu",
        why:
            "no CPU kernel for this op in this build (lindiff-cpu's `op-svd` and `op-eigh` features are off)",
    })
}

fn values_check_arity(got: usize) -> Error {
    Error::Arity { op: ValuesCheck::NAME, expected: ValuesCheck::INPUTS.len(), got }
}

/// The kernel of `op` for input (or constant) type `T`.
fn dispatch<T: Field + Complexify>(
    op: &PrimOp,
    inputs: &[Input<'_, Host>],
    out: &mut Output<'_, '_, Host>,
    workspace: &mut HostBuffer<'_>,
    exec: Exec,
) -> Result<()> {
    match op {
        PrimOp::Matmul(m) => matmul::matmul::<T>(m, inputs, out, workspace, exec),
        PrimOp::Unary(u) => elementwise::unary::<T>(u.0, inputs, out),
        PrimOp::Binary(b) => elementwise::binary::<T>(b.0, inputs, out),
        PrimOp::Scale(s) => elementwise::scale::<T>(s.0, inputs, out),
        PrimOp::Adjoint(a) => layout::adjoint::<T>(a, inputs, out),
        PrimOp::DiagPart(_) => diag::diag_part::<T>(inputs, out),
        PrimOp::DiagEmbed(_) => diag::diag_embed::<T>(inputs, out),
        PrimOp::TriMask(t) => diag::tri_mask::<T>(t, inputs, out),
        PrimOp::ScaleCols(_) => diag::scale_by::<T>(Along::Cols, inputs, out),
        PrimOp::ScaleRows(_) => diag::scale_by::<T>(Along::Rows, inputs, out),
        PrimOp::Reduce(r) => layout::reduce::<T>(r, inputs, out),
        PrimOp::Reshape(_) => layout::reshape::<T>(inputs, out),
        PrimOp::Spread(_) => layout::spread::<T>(inputs, out),
        PrimOp::Slice(s) => layout::slice::<T>(s, inputs, out),
        PrimOp::Pad(p) => layout::pad::<T>(p, inputs, out),
        PrimOp::Fill(f) => constant::fill::<T>(f.value, out),
        PrimOp::Eye(_) => constant::eye::<T>(out),
        PrimOp::PairInv(p) => spectral::pair_inv::<T>(p, inputs, out),
        PrimOp::PivotPhase(_) => spectral::pivot_phase::<T>(inputs, out),
        PrimOp::RankMask(m) => mask::rank_mask::<T>(m, inputs, out),
        PrimOp::ExtremeMask(m) => extreme::extreme_mask::<T>(m, inputs, out),
    }
}

/// The workspace of [`chain`]: none, in a `std` build with the dtype's
/// kernels.
///
/// # Errors
/// [`Error::Unsupported`] without `std` or for a dtype whose feature is
/// off; [`Error::Arity`] for a chain without inputs.
pub(crate) fn chain_workspace(inputs: &[&TensorDesc]) -> Result<WorkspaceReq> {
    chain_built()?;
    let dtype = inputs.first().map(|d| d.meta.dtype).ok_or_else(chain_arity)?;
    with_field!(Chain::NAME, dtype, _Built => Ok(WorkspaceReq::EMPTY))
}

/// Runs a compiled plan's [`Chain`] (`std` builds).
///
/// # Errors
/// As [`chain_workspace`]; [`Error::Buffer`] for a misaligned buffer.
pub(crate) fn chain(
    op: &Chain,
    inputs: &[Input<'_, Host>],
    outputs: &mut [Option<Output<'_, '_, Host>>],
) -> Result<()> {
    #[cfg(not(feature = "std"))]
    return {
        let _ = (op, inputs, outputs);
        Err(chain_unsupported())
    };
    #[cfg(feature = "std")]
    return {
        let dtype = inputs.first().map(|i| i.desc.meta.dtype).ok_or_else(chain_arity)?;
        let out = first_output(Chain::NAME, "y", outputs)?;
        with_field!(Chain::NAME, dtype, T => chain::chain::<T>(op, inputs, out))
    };
}

/// Output 0 of a one-output op (always present: `call` checked it).
///
/// # Errors
/// [`Error::Buffer`] naming `arg` if it is missing.
fn first_output<'o, 'a, 'm>(
    op: &'static str,
    arg: &'static str,
    outputs: &'o mut [Option<Output<'a, 'm, Host>>],
) -> Result<&'o mut Output<'a, 'm, Host>> {
    match outputs.first_mut() {
        Some(Some(out)) => Ok(out),
        _ => Err(Error::Buffer { op, arg, why: "is missing", needed: 1, got: 0 }),
    }
}

/// Chains run in `std` builds only: firmware keeps the primitives' code
/// alone (.text counts there), and its plans do not fuse.
fn chain_built() -> Result<()> {
    if cfg!(feature = "std") {
        Ok(())
    } else {
        Err(chain_unsupported())
    }
}

fn chain_unsupported() -> Error {
    Error::Unsupported { op: Chain::NAME, provider: "cpu", why: "elementwise chains run in std builds only" }
}

fn chain_arity() -> Error {
    Error::Arity { op: Chain::NAME, expected: 1, got: 0 }
}
