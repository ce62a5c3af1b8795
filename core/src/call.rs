//! Checked entry points to a [`Provider`]: every shape, dtype, stride and
//! buffer-size check happens here, once, for every provider.

use crate::error::{Error, Result};
use crate::memory::Memory;
use crate::op::{Outputs, MAX_INPUTS, MAX_OUTPUTS};
use crate::provider::{Input, Op, Output, Provider};
use crate::tensor::{TensorDesc, TensorMeta};
use crate::workspace::WorkspaceReq;

/// Output metas for `op` on inputs laid out as `inputs`, after checking the
/// layouts themselves (one stride per dim, element span fits in `usize`).
///
/// # Errors
/// [`Error::Arity`], the op's typed shape/dtype errors, [`Error::Overflow`]
/// for a view whose span overflows.
///
/// ```
/// use lindiff_core::{call, op::Det, DType, LinalgOp, Op, Shape, TensorDesc, TensorMeta};
/// let a = TensorDesc::contiguous(TensorMeta::new(DType::F64, Shape::new(&[0, 0]).unwrap())).unwrap();
/// let outs = call::infer(&Op::Linalg(LinalgOp::Det(Det)), &[&a]).unwrap();
/// assert_eq!(outs[0].as_ref().unwrap().shape.rank(), 0); // det of 0×0 is a scalar (= 1)
/// ```
pub fn infer(op: &Op, inputs: &[&TensorDesc]) -> Result<Outputs> {
    let names = op.input_names();
    if inputs.len() != names.len() || inputs.len() > MAX_INPUTS {
        return Err(Error::Arity { op: op.name(), expected: names.len(), got: inputs.len() });
    }
    let mut metas = heapless::Vec::<&TensorMeta, MAX_INPUTS>::new();
    for (desc, &arg) in inputs.iter().zip(names) {
        if desc.strides.len() != desc.meta.shape.rank() {
            return Err(Error::Buffer {
                op: op.name(),
                arg,
                why: "has a stride count different from its rank",
                needed: desc.meta.shape.rank(),
                got: desc.strides.len(),
            });
        }
        if desc.span().is_none() {
            return Err(Error::Overflow { op: op.name(), arg, shape: desc.meta.shape.clone() });
        }
        // Capacity: inputs.len() ≤ MAX_INPUTS was checked above.
        let _ = metas.push(&desc.meta);
    }
    op.infer(&metas)
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

/// Runs `op` on `provider` after every check: shapes and dtypes, each input's
/// view inside its data and aligned for its dtype, one aligned buffer per
/// present output (large enough, and none for an output the options switch
/// off), and the workspace size (its start may have any alignment: the
/// requirement counts from the first aligned byte).
///
/// # Errors
/// Any check's typed error ([`Error::Buffer`] for a buffer that does not
/// fit), then the provider's own errors.
pub fn run_into<'m, P: Provider>(
    provider: &P,
    op: &Op,
    inputs: &[Input<'_, P::Memory>],
    outputs: &mut [Option<&mut <P::Memory as Memory>::Buffer<'m>>],
    workspace: &mut <P::Memory as Memory>::Buffer<'m>,
) -> Result<()> {
    let name = op.name();
    let mut descs = heapless::Vec::<&TensorDesc, MAX_INPUTS>::new();
    for input in inputs {
        if descs.push(input.desc).is_err() {
            return Err(Error::Arity { op: name, expected: op.input_names().len(), got: inputs.len() });
        }
    }
    let metas = infer(op, &descs)?;
    for (input, &arg) in inputs.iter().zip(op.input_names()) {
        let desc = input.desc;
        // `infer` checked that the span fits; bytes may still overflow.
        let span = desc.span().unwrap_or(usize::MAX);
        let needed = span.checked_mul(desc.meta.dtype.size()).ok_or_else(|| Error::Overflow {
            op: name,
            arg,
            shape: desc.meta.shape.clone(),
        })?;
        let got = P::Memory::data_bytes(&input.data);
        if got < needed {
            return Err(Error::Buffer { op: name, arg, why: "is smaller than its view", needed, got });
        }
        let align = desc.meta.dtype.align();
        if !P::Memory::data_is_aligned(&input.data, align) {
            return Err(Error::Buffer {
                op: name,
                arg,
                why: "is not aligned for its dtype",
                needed: align,
                got: 0,
            });
        }
    }
    check_outputs::<P::Memory>(op, &metas, outputs)?;
    let req = provider.workspace(op, &descs)?;
    let got = P::Memory::usable_bytes(workspace, req.align());
    if got < req.bytes() {
        return Err(Error::Buffer {
            op: name,
            arg: "workspace",
            why: "is too small",
            needed: req.bytes(),
            got,
        });
    }
    let mut slots = heapless::Vec::<Option<Output<'_, 'm, P::Memory>>, MAX_OUTPUTS>::new();
    for (meta, buffer) in metas.iter().zip(outputs.iter_mut()) {
        let slot = match (meta, buffer) {
            (Some(meta), Some(buffer)) => Some(Output { meta, buffer: &mut **buffer }),
            _ => None,
        };
        // Capacity: metas has at most MAX_OUTPUTS entries.
        let _ = slots.push(slot);
    }
    // SAFETY: every check `Provider::run_into` relies on was made above.
    unsafe { provider.run_into(op, inputs, &mut slots, workspace) }
}

fn check_outputs<M: Memory>(op: &Op, metas: &Outputs, outputs: &[Option<&mut M::Buffer<'_>>]) -> Result<()> {
    let name = op.name();
    if outputs.len() != metas.len() {
        return Err(Error::Buffer {
            op: name,
            arg: "outputs",
            why: "has the wrong number of slots",
            needed: metas.len(),
            got: outputs.len(),
        });
    }
    for ((meta, buffer), &arg) in metas.iter().zip(outputs).zip(op.output_names()) {
        match (meta, buffer) {
            (Some(meta), Some(buffer)) => {
                // `infer` produced this meta with an overflow-checked size.
                let needed = meta.bytes().unwrap_or(usize::MAX);
                let align = meta.dtype.align();
                if !M::buffer_is_aligned(buffer, align) {
                    return Err(Error::Buffer {
                        op: name,
                        arg,
                        why: "is not aligned for its dtype",
                        needed: align,
                        got: 0,
                    });
                }
                let got = M::usable_bytes(buffer, align);
                if got < needed {
                    return Err(Error::Buffer { op: name, arg, why: "is too small", needed, got });
                }
            }
            (Some(meta), None) => {
                let needed = meta.bytes().unwrap_or(usize::MAX);
                return Err(Error::Buffer { op: name, arg, why: "is missing", needed, got: 0 });
            }
            (None, Some(_)) => {
                return Err(Error::Buffer {
                    op: name,
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
