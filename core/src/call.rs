//! Checked entry points to a [`Provider`]: every shape, dtype, stride and
//! buffer-size check happens here, once, for every provider. (The direct
//! face makes its buffers to a plan's measure itself and runs the plan
//! without re-checking them: `run_plan_unchecked`.)

use crate::error::{Error, Result};
use crate::exec::Exec;
use crate::memory::Memory;
use crate::op::{Outputs, MAX_INPUTS, MAX_OUTPUTS};
use crate::provider::{Input, Op, Output, Provider};
use crate::tensor::{TensorDesc, TensorMeta};
use crate::workspace::WorkspaceReq;

/// Output metas for `op` on inputs laid out as `inputs`, after checking the
/// layouts themselves (one stride per dim, span in bytes fits in `usize`).
///
/// # Errors
/// [`Error::Arity`], the op's typed shape/dtype errors, [`Error::Overflow`]
/// for a view whose span (in elements or in bytes) overflows `usize`.
///
/// ```
/// use lindiff_core::{call, op::Det, DType, LinalgOp, Op, Shape, TensorDesc, TensorMeta};
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let shape = Shape::new(&[0, 0]).map_err(|_| "more dims than MAX_RANK")?;
/// let a = TensorDesc::contiguous(TensorMeta::new(DType::F64, shape)).ok_or("strides overflow")?;
/// let outs = call::infer(&Op::Linalg(LinalgOp::Det(Det)), &[&a])?;
/// let det = outs[0].as_ref().ok_or("det has one output")?;
/// assert_eq!(det.shape.rank(), 0); // det of 0×0 is a scalar (= 1)
/// # Ok(())
/// # }
/// ```
pub fn infer(op: &Op, inputs: &[&TensorDesc]) -> Result<Outputs> {
    infer_sized(op, inputs).map(|(outputs, _)| outputs)
}

/// [`infer`], with the bytes each argument's buffer must hold: every
/// input's span is computed once, for the overflow check and the sizes.
fn infer_sized(op: &Op, inputs: &[&TensorDesc]) -> Result<(Outputs, Sizes)> {
    let names = op.input_names();
    if inputs.len() != names.len() || inputs.len() > MAX_INPUTS {
        return Err(Error::Arity { op: op.name(), expected: names.len(), got: inputs.len() });
    }
    let mut metas = heapless::Vec::<&TensorMeta, MAX_INPUTS>::new();
    let mut sizes = Sizes { inputs: [0; MAX_INPUTS], outputs: [0; MAX_OUTPUTS] };
    for ((desc, &arg), size) in inputs.iter().zip(names).zip(&mut sizes.inputs) {
        if desc.strides.len() != desc.meta.shape.rank() {
            return Err(Error::Buffer {
                op: op.name(),
                arg,
                why: "has a stride count different from its rank",
                needed: desc.meta.shape.rank(),
                got: desc.strides.len(),
            });
        }
        *size = span_bytes(desc).ok_or_else(|| Error::Overflow {
            op: op.name(),
            arg,
            shape: desc.meta.shape.clone(),
        })?;
        // Capacity: inputs.len() ≤ MAX_INPUTS was checked above.
        let _ = metas.push(&desc.meta);
    }
    let outputs = op.infer(&metas)?;
    for (size, meta) in sizes.outputs.iter_mut().zip(&outputs) {
        // `op.infer` made each meta with an overflow-checked size.
        *size = meta.as_ref().map_or(0, |m| m.bytes().unwrap_or(usize::MAX));
    }
    Ok((outputs, sizes))
}

/// The workspace `provider` needs for `op` on these inputs (after [`infer`]).
///
/// # Errors
/// As [`infer`], plus the provider's
/// [`Error::Unsupported`].
pub fn workspace<P: Provider>(provider: &P, op: &Op, inputs: &[&TensorDesc]) -> Result<WorkspaceReq> {
    infer(op, inputs)?;
    provider.workspace(op, inputs)
}

/// The checked plan of one call: its output metas, its workspace and the
/// bytes each argument's buffer must hold, computed once by [`prepare`] and
/// trusted by [`run_prepared`] (only `prepare` can make one, and
/// `run_prepared` checks the inputs are the ones it was made for and the
/// provider is the one — by name and exec — that sized its workspace).
#[derive(Clone, Debug)]
pub struct Prepared {
    op: Op,
    /// The provider (`Provider::name`) and exec the plan was made with:
    /// its workspace is theirs.
    provider: &'static str,
    exec: Exec,
    descs: heapless::Vec<TensorDesc, MAX_INPUTS>,
    outputs: Outputs,
    workspace: WorkspaceReq,
    /// The bytes each input's view spans and each present output needs,
    /// computed once here rather than from dims and strides on every call.
    sizes: Sizes,
}

impl Prepared {
    /// `true` when this plan was made for `op` on exactly these layouts.
    #[cfg(feature = "alloc")]
    pub(crate) fn is_for<'d>(&self, op: &Op, inputs: impl ExactSizeIterator<Item = &'d TensorDesc>) -> bool {
        self.op == *op && self.has_layouts(inputs)
    }

    /// `true` when the plan was made for exactly these input layouts.
    fn has_layouts<'d>(&self, inputs: impl ExactSizeIterator<Item = &'d TensorDesc>) -> bool {
        self.descs.len() == inputs.len() && self.descs.iter().zip(inputs).all(|(d, i)| same_layout(d, i))
    }

    /// Output metas (`None` for outputs the op's options switch off).
    pub fn outputs(&self) -> &Outputs {
        &self.outputs
    }

    /// The workspace the call needs.
    pub fn workspace(&self) -> WorkspaceReq {
        self.workspace
    }

    /// Bytes output `i`'s buffer must hold (0 for an absent output).
    #[cfg(feature = "alloc")]
    pub(crate) fn output_bytes(&self, i: usize) -> usize {
        self.sizes.outputs[i]
    }
}

/// `a == b` (the same fields `TensorDesc`'s `PartialEq` compares), with
/// dims and strides compared entry by entry: a plan is found by this
/// compare on every call, and the derived one calls `bcmp` twice per
/// layout for a few words each.
fn same_layout(a: &TensorDesc, b: &TensorDesc) -> bool {
    let same = |x: &[usize], y: &[usize]| x.len() == y.len() && x.iter().zip(y).all(|(p, q)| p == q);
    let equal = a.offset == b.offset
        && a.meta.dtype == b.meta.dtype
        && same(a.meta.shape.dims(), b.meta.shape.dims())
        && same(&a.strides, &b.strides);
    debug_assert_eq!(equal, a == b);
    equal
}

/// Infers the outputs and asks the provider for the workspace, once.
///
/// # Errors
/// As [`infer`], plus the provider's
/// [`Error::Unsupported`].
pub fn prepare<P: Provider>(provider: &P, op: &Op, inputs: &[&TensorDesc]) -> Result<Prepared> {
    let (outputs, sizes) = infer_sized(op, inputs)?;
    let workspace = provider.workspace(op, inputs)?;
    let mut descs = heapless::Vec::new();
    for d in inputs {
        let _ = descs.push((*d).clone()); // `infer` checked the arity (≤ MAX_INPUTS)
    }
    Ok(Prepared {
        op: op.clone(),
        provider: provider.name(),
        exec: provider.exec(),
        descs,
        outputs,
        workspace,
        sizes,
    })
}

/// Bytes each argument's buffer must hold: the span of each input's view
/// and the contiguous size of each present output (0 for absent ones).
#[derive(Clone, Copy, Debug)]
struct Sizes {
    inputs: [usize; MAX_INPUTS],
    outputs: [usize; MAX_OUTPUTS],
}

/// The bytes a view spans, `None` when that overflows `usize`.
fn span_bytes(desc: &TensorDesc) -> Option<usize> {
    desc.span()?.checked_mul(desc.meta.dtype.size())
}

/// Runs `op` on `provider` after every check: shapes and dtypes, each input's
/// view inside its data and aligned for its dtype, one aligned buffer per
/// present output (large enough, and none for an output the options switch
/// off), and the workspace size (its start may have any alignment: the
/// requirement counts from the first aligned byte).
///
/// # Errors
/// Any check's typed error ([`Error::Buffer`] for a buffer that does not
/// fit), then the provider's own errors.
///
/// # Buffers on error
/// After an `Err`, the output buffers (and the workspace) hold unspecified
/// values: possibly partial results, as LAPACK leaves them, possibly what
/// the caller put there. Read none of them. The inputs are never modified,
/// on `Ok` or `Err`: a provider that factors in place copies its input
/// into an output or the workspace first.
pub fn run_into<'m, P: Provider>(
    provider: &P,
    op: &Op,
    inputs: &[Input<'_, P::Memory>],
    outputs: &mut [Option<&mut <P::Memory as Memory>::Buffer<'m>>],
    workspace: &mut <P::Memory as Memory>::Buffer<'m>,
) -> Result<()> {
    let mut descs = heapless::Vec::<&TensorDesc, MAX_INPUTS>::new();
    for input in inputs {
        if descs.push(input.desc).is_err() {
            return Err(Error::Arity { op: op.name(), expected: op.input_names().len(), got: inputs.len() });
        }
    }
    let (metas, sizes) = infer_sized(op, &descs)?;
    // Buffers are checked before the provider is asked anything.
    check_buffers::<P::Memory>(op, &metas, &sizes, inputs, outputs)?;
    let req = provider.workspace(op, &descs)?;
    // SAFETY: `infer` and `check_buffers` ran on exactly these inputs and
    // outputs, and the workspace requirement is the provider's own.
    unsafe { run_checked(provider, op, &metas, req, inputs, outputs, workspace) }
}

/// [`run_into`] with the plan already made: checks that `provider` is the
/// one (by name and exec) the plan was prepared on and that `inputs` are
/// laid out as planned, then every buffer, then runs.
///
/// # Errors
/// [`Error::Unsupported`] for a plan prepared on another provider or exec
/// (its workspace was sized for that one); [`Error::Buffer`] for inputs
/// that differ from the plan or buffers that do not fit; then the
/// provider's own errors.
pub fn run_prepared<'m, P: Provider>(
    provider: &P,
    prepared: &Prepared,
    inputs: &[Input<'_, P::Memory>],
    outputs: &mut [Option<&mut <P::Memory as Memory>::Buffer<'m>>],
    workspace: &mut <P::Memory as Memory>::Buffer<'m>,
) -> Result<()> {
    // Names are compared by address first: a provider's name is usually
    // one `&'static str`, so the plan's is then the same pointer.
    let name = provider.name();
    let same_name = core::ptr::eq(prepared.provider, name) || prepared.provider == name;
    if !same_name || prepared.exec != provider.exec() {
        return Err(Error::Unsupported {
            op: prepared.op.name(),
            provider: name,
            why: "the plan was prepared on another provider or exec (prepare it on this one)",
        });
    }
    if !prepared.has_layouts(inputs.iter().map(|i| i.desc)) {
        return Err(Error::Buffer {
            op: prepared.op.name(),
            arg: "inputs",
            why: "differ from the ones the call was prepared for",
            needed: prepared.descs.len(),
            got: inputs.len(),
        });
    }
    let op = &prepared.op;
    check_buffers::<P::Memory>(op, &prepared.outputs, &prepared.sizes, inputs, outputs)?;
    // SAFETY: the plan was made by `prepare` for these layouts (checked
    // just above), and the buffers were just checked against it.
    unsafe { run_checked(provider, op, &prepared.outputs, prepared.workspace, inputs, outputs, workspace) }
}

/// [`run_prepared`] without its checks: for a caller that found the plan
/// by comparing the input layouts and made the buffers itself to the
/// plan's measure (the direct face's pool blocks): a call's buffers are
/// checked where they are made, not again here.
///
/// # Safety
/// `prepared` must have been made by [`prepare`] for the layouts of
/// `inputs` (and for `provider`), and what [`check_buffers`] and the
/// workspace check of [`run_checked`] check must hold: each input's data
/// covers its view (the plan's input sizes) and is aligned for its dtype; `outputs`
/// has one slot per output of the plan, a buffer exactly where the plan
/// has an output, each aligned for its dtype and holding at least
/// [`Prepared::output_bytes`]; the workspace holds
/// [`Prepared::workspace`]'s bytes from its first byte aligned to it.
#[cfg(feature = "alloc")]
pub(crate) unsafe fn run_plan_unchecked<'m, P: Provider>(
    provider: &P,
    prepared: &Prepared,
    inputs: &[Input<'_, P::Memory>],
    outputs: &mut [Option<&mut <P::Memory as Memory>::Buffer<'m>>],
    workspace: &mut <P::Memory as Memory>::Buffer<'m>,
) -> Result<()> {
    debug_assert!(check_buffers::<P::Memory>(
        &prepared.op,
        &prepared.outputs,
        &prepared.sizes,
        inputs,
        outputs
    )
    .is_ok());
    debug_assert!(
        P::Memory::usable_bytes(workspace, prepared.workspace.align()) >= prepared.workspace.bytes()
    );
    // SAFETY: every check `run_slots` relies on holds (this function's
    // contract).
    unsafe { run_slots(provider, &prepared.op, &prepared.outputs, inputs, outputs, workspace) }
}

/// Checks each input's data against its view (size, alignment) and the
/// output buffers against `metas` (`sizes` made from these layouts).
fn check_buffers<M: Memory>(
    op: &Op,
    metas: &Outputs,
    sizes: &Sizes,
    inputs: &[Input<'_, M>],
    outputs: &[Option<&mut M::Buffer<'_>>],
) -> Result<()> {
    for ((input, &arg), &needed) in inputs.iter().zip(op.input_names()).zip(&sizes.inputs) {
        let got = M::data_bytes(&input.data);
        if got < needed {
            return Err(Error::Buffer { op: op.name(), arg, why: "is smaller than its view", needed, got });
        }
        let align = input.desc.meta.dtype.align();
        if !M::data_is_aligned(&input.data, align) {
            return Err(Error::Buffer {
                op: op.name(),
                arg,
                why: "is not aligned for its dtype",
                needed: align,
                got: 0,
            });
        }
    }
    check_outputs::<M>(op, metas, &sizes.outputs, outputs)
}

/// Checks the workspace size and runs the provider.
///
/// # Safety
/// `metas` and `req` must describe `inputs` (from `infer` and the provider's
/// `workspace` on their layouts) and the inputs and outputs must have passed
/// [`check_buffers`] against `metas`.
unsafe fn run_checked<'m, P: Provider>(
    provider: &P,
    op: &Op,
    metas: &Outputs,
    req: WorkspaceReq,
    inputs: &[Input<'_, P::Memory>],
    outputs: &mut [Option<&mut <P::Memory as Memory>::Buffer<'m>>],
    workspace: &mut <P::Memory as Memory>::Buffer<'m>,
) -> Result<()> {
    let got = P::Memory::usable_bytes(workspace, req.align());
    if got < req.bytes() {
        return Err(Error::Buffer {
            op: op.name(),
            arg: "workspace",
            why: "is too small",
            needed: req.bytes(),
            got,
        });
    }
    // SAFETY: as this function's contract, with the workspace just checked.
    unsafe { run_slots(provider, op, metas, inputs, outputs, workspace) }
}

/// Pairs each present output's buffer with its meta and runs the provider.
///
/// # Safety
/// Every check `Provider::run_into` relies on must have been made: `metas`
/// describe `inputs` (from `infer` on their layouts), the inputs and
/// outputs passed [`check_buffers`] against `metas` (or hold what it
/// checks), and the workspace is large enough for the provider's
/// requirement on these layouts.
unsafe fn run_slots<'m, P: Provider>(
    provider: &P,
    op: &Op,
    metas: &Outputs,
    inputs: &[Input<'_, P::Memory>],
    outputs: &mut [Option<&mut <P::Memory as Memory>::Buffer<'m>>],
    workspace: &mut <P::Memory as Memory>::Buffer<'m>,
) -> Result<()> {
    let mut slots = heapless::Vec::<Option<Output<'_, 'm, P::Memory>>, MAX_OUTPUTS>::new();
    for (meta, buffer) in metas.iter().zip(outputs.iter_mut()) {
        let slot = match (meta, buffer) {
            (Some(meta), Some(buffer)) => Some(Output { meta, buffer: &mut **buffer }),
            _ => None,
        };
        // Capacity: at most MAX_OUTPUTS outputs.
        let _ = slots.push(slot);
    }
    // SAFETY: per this function's contract every check `Provider::run_into`
    // relies on has been made.
    unsafe { provider.run_into(op, inputs, &mut slots, workspace) }
}

fn check_outputs<M: Memory>(
    op: &Op,
    metas: &Outputs,
    sizes: &[usize],
    outputs: &[Option<&mut M::Buffer<'_>>],
) -> Result<()> {
    if outputs.len() != metas.len() {
        return Err(Error::Buffer {
            op: op.name(),
            arg: "outputs",
            why: "has the wrong number of slots",
            needed: metas.len(),
            got: outputs.len(),
        });
    }
    for (((meta, buffer), &arg), &needed) in metas.iter().zip(outputs).zip(op.output_names()).zip(sizes) {
        match (meta, buffer) {
            (Some(meta), Some(buffer)) => {
                let align = meta.dtype.align();
                if !M::buffer_is_aligned(buffer, align) {
                    return Err(Error::Buffer {
                        op: op.name(),
                        arg,
                        why: "is not aligned for its dtype",
                        needed: align,
                        got: 0,
                    });
                }
                let got = M::usable_bytes(buffer, align);
                if got < needed {
                    return Err(Error::Buffer { op: op.name(), arg, why: "is too small", needed, got });
                }
            }
            (Some(_), None) => {
                return Err(Error::Buffer { op: op.name(), arg, why: "is missing", needed, got: 0 });
            }
            (None, Some(_)) => {
                return Err(Error::Buffer {
                    op: op.name(),
                    arg,
                    why: "must be absent (the op's options switch this output off)",
                    needed: 0,
                    got: 1,
                });
            }
            (None, None) => {}
        }
    }
    Ok(())
}
