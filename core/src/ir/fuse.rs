//! Elementwise fusion for a compiled plan: chains of elementwise arithmetic
//! (negation, conjugation, sums, differences, products, quotients and
//! scalings of equal shapes) whose intermediate values are read once run
//! as one [`Chain`] instruction, where the provider runs chains. The
//! program is not changed: the plan keeps, per instruction, whether it
//! runs as written, inside a chain, or as a chain's last step.
//!
//! Each link rounds exactly as the op it replaces, so a fused plan gives
//! the bits of the unfused one and of the eager face. What fusion saves is
//! memory traffic: a rule's backward at n = 128…512 runs a dozen such
//! steps over n×n matrices, each a full pass over memory when run alone.
//!
//! With the `alloc` feature only: firmware plans (no `alloc`) run every
//! instruction as written and keep no slots (a slot holds an op, and a plan
//! lives on the caller's stack there).

use super::{Program, ValueId};
use crate::op::MAX_INPUTS;
use crate::provider::{Op, Provider};
use crate::seq::Seq;
use crate::tensor::TensorDesc;
use crate::Result;
#[cfg(feature = "alloc")]
use {
    super::interp::input_descs,
    crate::call,
    crate::op::internal::{Chain, InternalOp, Link, LinkOp, Operand, MAX_LINKS, MAX_SCALES},
    crate::prim::{BinaryOp, PrimOp, UnaryOp},
};

/// How the plan runs one instruction of the program.
#[derive(Clone, Debug)]
#[cfg_attr(not(feature = "alloc"), allow(dead_code))]
pub(super) enum Slot {
    /// As written.
    AsIs,
    /// Inside the chain of a later instruction.
    Absorbed,
    /// As the last step of a chain: this op on these inputs.
    Chain(Op, heapless::Vec<ValueId, MAX_INPUTS>),
}

/// One instruction as the plan runs it: op, inputs, outputs.
pub(super) type Step<'a> = (&'a Op, &'a [ValueId], &'a [Option<ValueId>]);

/// The plan's slots, one per instruction (none without `alloc`: every
/// instruction runs as written).
pub(super) struct Fusion<const I: usize> {
    #[cfg(feature = "alloc")]
    slots: Seq<Slot, I>,
}

/// The slot of every instruction of a plan without `alloc`.
#[cfg(not(feature = "alloc"))]
static AS_IS: Slot = Slot::AsIs;

impl<const I: usize> Fusion<I> {
    /// The chains of `program` that `provider` runs (every chain is tried
    /// on the provider with its inputs' layouts; one it refuses stays
    /// unfused), parameters laid out as `params`.
    ///
    /// # Errors
    /// Capacity; an overflowing value size.
    pub(super) fn plan<P: Provider, const V: usize>(
        provider: &P,
        program: &Program<I, V>,
        params: &[TensorDesc],
    ) -> Result<Self> {
        #[cfg(not(feature = "alloc"))]
        {
            let _ = (provider, program, params);
            Ok(Fusion {})
        }
        #[cfg(feature = "alloc")]
        Self::plan_chains(provider, program, params)
    }

    /// [`Fusion::plan`] with `alloc`.
    #[cfg(feature = "alloc")]
    fn plan_chains<P: Provider, const V: usize>(
        provider: &P,
        program: &Program<I, V>,
        params: &[TensorDesc],
    ) -> Result<Self> {
        let n = program.instrs.len();
        let mut slots: Seq<Slot, I> = Seq::filled(n, Slot::AsIs, "program instructions")?;
        // Reads of each value (a result counts as read elsewhere) and the
        // instruction that writes it.
        let mut reads: Seq<usize, V> = Seq::filled(program.values.len(), 0, "program values")?;
        let mut writer: Seq<Option<usize>, V> = Seq::filled(program.values.len(), None, "program values")?;
        for (k, instr) in program.instrs.iter().enumerate() {
            for v in &instr.inputs {
                reads[v.index()] += 1;
            }
            for v in instr.outputs.iter().flatten() {
                writer[v.index()] = Some(k);
            }
        }
        for v in program.results.iter() {
            reads[v.index()] = usize::MAX;
        }
        // Last instructions first, so a chain ends at the last step of its
        // elementwise run.
        for root in (0..n).rev() {
            if !matches!(slots[root], Slot::AsIs) || link_op(&program.instrs[root].op).is_none() {
                continue;
            }
            let mut grow = Grow::default();
            let absorbable = |v: ValueId| {
                let p = writer[v.index()]?;
                // Read by this chain alone; elementwise ops have one output.
                (reads[v.index()] == 1 && link_op(&program.instrs[p].op).is_some()).then_some(p)
            };
            if grow.link(program, root, &absorbable).is_none() || grow.taken.len() < 2 {
                continue;
            }
            let op = Op::Internal(InternalOp::Chain(grow.chain()));
            let descs = input_descs(program, params, &grow.leaves)?;
            let refs: heapless::Vec<&TensorDesc, MAX_INPUTS> = descs.iter().collect();
            if call::prepare(provider, &op, &refs).is_err() {
                continue;
            }
            for &p in &grow.taken[1..] {
                slots[p] = Slot::Absorbed;
            }
            slots[root] = Slot::Chain(op, grow.leaves);
        }
        Ok(Fusion { slots })
    }

    /// The instructions as the plan runs them, with their indices in the
    /// program (absorbed ones left out).
    pub(super) fn steps<'a, const V: usize>(
        &'a self,
        program: &'a Program<I, V>,
    ) -> impl Iterator<Item = (usize, Step<'a>)> + 'a {
        program.instrs.iter().enumerate().filter_map(|(k, instr)| {
            let step: Step<'a> = match self.slot(k) {
                Slot::AsIs => (&instr.op, &instr.inputs, &instr.outputs),
                Slot::Absorbed => return None,
                Slot::Chain(op, inputs) => (op, inputs, &instr.outputs),
            };
            Some((k, step))
        })
    }

    /// How instruction `k` runs.
    fn slot(&self, k: usize) -> &Slot {
        #[cfg(feature = "alloc")]
        return &self.slots[k];
        #[cfg(not(feature = "alloc"))]
        {
            let _ = k;
            &AS_IS
        }
    }

    /// For each value, the index of the last step that reads it
    /// (`usize::MAX` for results; 0 for values never read).
    ///
    /// # Errors
    /// Capacity.
    pub(super) fn last_uses<const V: usize>(&self, program: &Program<I, V>) -> Result<Seq<usize, V>> {
        let mut last: Seq<usize, V> = Seq::filled(program.values.len(), 0, "program values")?;
        for (k, (_, inputs, _)) in self.steps(program) {
            for v in inputs {
                last[v.index()] = k;
            }
        }
        for v in program.results.iter() {
            last[v.index()] = usize::MAX;
        }
        Ok(last)
    }
}

/// The link an instruction's op would be, if it is fusible elementwise
/// arithmetic (one output, of its inputs' dtype and shape).
#[cfg(feature = "alloc")]
fn link_op(op: &Op) -> Option<LinkOp> {
    match op {
        Op::Prim(PrimOp::Unary(u)) => match u.0 {
            UnaryOp::Neg => Some(LinkOp::Neg),
            UnaryOp::Conj => Some(LinkOp::Conj),
            _ => None,
        },
        Op::Prim(PrimOp::Binary(b)) => Some(match b.0 {
            BinaryOp::Add => LinkOp::Add,
            BinaryOp::Sub => LinkOp::Sub,
            BinaryOp::Mul => LinkOp::Mul,
            BinaryOp::Div => LinkOp::Div,
        }),
        Op::Prim(PrimOp::Scale(s)) => Some(LinkOp::Scale(s.0)),
        _ => None,
    }
}

/// A chain being grown from its last instruction back through the
/// instructions whose values only it reads.
#[cfg(feature = "alloc")]
#[derive(Default)]
struct Grow {
    links: heapless::Vec<Link, MAX_LINKS>,
    leaves: heapless::Vec<ValueId, MAX_INPUTS>,
    /// The instructions linked so far.
    taken: heapless::Vec<usize, MAX_LINKS>,
    /// Scalings among the links.
    scales: usize,
}

#[cfg(feature = "alloc")]
impl Grow {
    /// Links instruction `k` after the producers of its inputs that
    /// `absorbable` allows and the chain has room for (a producer that does
    /// not fit is undone and its value read as an input); returns `k`'s
    /// operand, or `None` (with the chain as it was) when `k` does not fit.
    fn link<const I: usize, const V: usize>(
        &mut self,
        program: &Program<I, V>,
        k: usize,
        absorbable: &impl Fn(ValueId) -> Option<usize>,
    ) -> Option<Operand> {
        let instr = &program.instrs[k];
        let op = link_op(&instr.op)?;
        let scale = matches!(op, LinkOp::Scale(_));
        if scale && self.scales == MAX_SCALES {
            return None;
        }
        let mark = (self.links.len(), self.leaves.len(), self.taken.len(), self.scales);
        // Room for this link first (and its scale factor), so producers
        // only take what is left.
        self.taken.push(k).ok()?;
        self.scales += usize::from(scale);
        let mut operands = [Operand::Input(0); 2];
        for (slot, &v) in operands.iter_mut().zip(&instr.inputs) {
            let linked = match absorbable(v) {
                Some(p) => self.link(program, p, absorbable),
                _ => None,
            };
            match linked.or_else(|| self.leaf(v)) {
                Some(o) => *slot = o,
                None => {
                    self.undo(mark);
                    return None;
                }
            }
        }
        let at = self.links.len() as u8;
        // `taken` (same capacity) had room for this link, so `links` does.
        let _ = self.links.push(Link { op, a: operands[0], b: operands[1] });
        Some(Operand::Link(at))
    }

    /// The input operand of value `v` (added once), or `None` when the
    /// chain has no room for another input.
    fn leaf(&mut self, v: ValueId) -> Option<Operand> {
        let at = match self.leaves.iter().position(|&l| l == v) {
            Some(at) => at,
            None => {
                self.leaves.push(v).ok()?;
                self.leaves.len() - 1
            }
        };
        Some(Operand::Input(at as u8))
    }

    /// Back to the chain as it was at `mark` (links, leaves, taken, scales).
    fn undo(&mut self, (links, leaves, taken, scales): (usize, usize, usize, usize)) {
        self.links.truncate(links);
        self.leaves.truncate(leaves);
        self.taken.truncate(taken);
        self.scales = scales;
    }

    /// The chain over exactly its leaves (`link` kept to a chain's
    /// capacities: links, inputs, scale factors).
    fn chain(&self) -> Chain {
        let mut chain = Chain::new(self.leaves.len());
        for link in &self.links {
            let pushed = chain.push(*link);
            debug_assert!(pushed.is_some(), "a grown chain fits a Chain");
        }
        chain
    }
}
