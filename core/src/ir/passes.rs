//! Program passes, run on the final program (after AD): dead-code
//! elimination and output pruning. An op whose outputs are only partly used
//! is replaced by the cheaper op [`LinalgOp::prune`] names (an SVD whose
//! vectors are unused becomes `SvdVals`, one whose V is unused drops it,
//! `Eigh` with only `w` used becomes `EighVals`); fused solves are never
//! pruned. Check ops (reverse mode's gauge checks) are never removed: they
//! are assertions whose failure is the result.

use super::{Instr, Program};
use crate::error::Result;
use crate::op::{LinalgOp, Live, MAX_OUTPUTS};
use crate::provider::Op;
use crate::seq::Seq;

/// Dead-code elimination, then pruning. Returns the number of instructions
/// removed or replaced.
///
/// # Errors
/// [`Error::OutOfMemory`](crate::Error::OutOfMemory) for its bookkeeping
/// (`alloc`).
pub fn optimize<const I: usize, const V: usize>(program: &mut Program<I, V>) -> Result<usize> {
    let mut live: Seq<bool, V> = Seq::filled(program.values.len(), false, "program values")?;
    for r in &program.results {
        live[r.index()] = true;
    }
    let mut keep: Seq<bool, I> = Seq::filled(program.instrs.len(), false, "program instructions")?;
    let mut changed = 0;
    for (k, instr) in program.instrs.iter_mut().enumerate().rev() {
        let used = Live::of(
            &instr
                .outputs
                .iter()
                .enumerate()
                .filter(|(_, o)| o.is_some_and(|v| live[v.index()]))
                .map(|(i, _)| i)
                .collect::<heapless::Vec<usize, MAX_OUTPUTS>>(),
        );
        // Checks (reverse mode's gauge checks) are assertions: kept even
        // when nothing reads their outputs.
        if used == Live::NONE && !instr.op.is_check() {
            changed += 1;
            continue;
        }
        keep[k] = true;
        if prune(instr, used) {
            changed += 1;
        }
        for v in &instr.inputs {
            live[v.index()] = true;
        }
    }
    let mut k = 0;
    program.instrs.retain(|_| {
        k += 1;
        keep[k - 1]
    });
    Ok(changed)
}

/// Replaces `instr`'s op with the cheaper one for outputs `used`, moving
/// each used output to the new op's output of the same name.
fn prune(instr: &mut Instr, used: Live) -> bool {
    let Op::Linalg(op) = &instr.op else { return false };
    let Some(cheaper) = LinalgOp::prune(op, used) else { return false };
    let old_names = op.output_names();
    let new_names = cheaper.output_names();
    let mut outputs = heapless::Vec::<Option<super::ValueId>, MAX_OUTPUTS>::new();
    for name in new_names {
        let at = old_names.iter().position(|n| n == name);
        let v = at
            .and_then(|i| instr.outputs.get(i).copied().flatten())
            .filter(|_| at.is_some_and(|i| used.contains(i)));
        let _ = outputs.push(v); // ≤ MAX_OUTPUTS
    }
    instr.op = Op::Linalg(cheaper);
    instr.outputs = outputs;
    true
}
