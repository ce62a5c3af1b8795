//! The array primitives as NVRTC kernels (matmul is in `matmul.rs`). Each
//! builds the strided view host-cpu's kernel walks and launches one kernel
//! writing the contiguous output; no workspace.

use super::common::{input_ptr, map, map_view, output_meta, output_ptr, suffix};
use crate::context::Gpu;
use crate::error::unsupported;
use crate::launch::launch;
use crate::memory::Device;
use crate::nvrtc::{View, Walk};
use lindiff_core::op::Triangle;
use lindiff_core::prim::{BinaryOp, Pair, PrimOp, ReduceOp, Regularize, UnaryOp};
use lindiff_core::{Input, MatOp, Output, Result, MAX_RANK};

fn unary_code(op: UnaryOp) -> i32 {
    match op {
        UnaryOp::Copy => 0,
        UnaryOp::Neg => 1,
        UnaryOp::Conj => 2,
        UnaryOp::Real => 3,
        UnaryOp::Imag => 4,
        UnaryOp::ToComplex => 5,
        UnaryOp::MulI => 6,
        UnaryOp::Abs => 7,
        UnaryOp::Abs2 => 8,
        UnaryOp::Sqrt => 9,
        UnaryOp::Recip => 10,
        UnaryOp::Exp => 11,
        UnaryOp::Log => 12,
        UnaryOp::NonzeroMask => 13,
    }
}

/// Strides padded to [`MAX_RANK`] from parts.
fn strides(parts: &[&[usize]]) -> heapless::Vec<usize, MAX_RANK> {
    let mut out = heapless::Vec::new();
    for part in parts {
        for &s in *part {
            // Capacity: the parts describe one tensor's dims (≤ MAX_RANK).
            let _ = out.push(s);
        }
    }
    out
}

/// Runs primitive `op` (not matmul).
pub(crate) fn run(
    gpu: &Gpu,
    op: &PrimOp,
    inputs: &[Input<'_, Device>],
    outputs: &mut [Option<Output<'_, '_, Device>>],
) -> Result<()> {
    let name = op.name();
    let Some(out_meta) = output_meta(outputs, 0).cloned() else { return Ok(()) };
    let out_dims = out_meta.shape.dims();
    let to = out_meta.dtype;
    let y = output_ptr(outputs, 0).unwrap_or(0);
    let walk = Walk::new(out_dims);
    match op {
        PrimOp::Unary(u) => map(gpu, unary_code(u.0), y, &inputs[0], to, 0.0, [0; 4]),
        PrimOp::Scale(s) => map(gpu, 14, y, &inputs[0], to, s.0, [0; 4]),
        PrimOp::Reshape(_) => map(gpu, 0, y, &inputs[0], to, 0.0, [0; 4]),
        PrimOp::TriMask(t) => {
            let code = if t.triangle == Triangle::Lower { 15 } else { 16 };
            map(gpu, code, y, &inputs[0], to, t.diagonal, [0; 4])
        }
        PrimOp::Adjoint(a) => {
            let d = inputs[0].desc;
            let s = &d.strides;
            let (code, view) = match a.0 {
                MatOp::Identity => (0, View::of(d)),
                MatOp::Transpose => (0, View::new(d.offset, &strides(&[&[s[1], s[0]], &s[2..]]))),
                MatOp::Adjoint => (2, View::new(d.offset, &strides(&[&[s[1], s[0]], &s[2..]]))),
            };
            map_view(gpu, code, y, input_ptr(&inputs[0]), d.meta.dtype, to, walk, view, 0.0, [0; 4])
        }
        PrimOp::DiagPart(_) => {
            let d = inputs[0].desc;
            let s = &d.strides;
            let view = View::new(d.offset, &strides(&[&[s[0] + s[1]], &s[2..]]));
            map_view(gpu, 0, y, input_ptr(&inputs[0]), d.meta.dtype, to, walk, view, 0.0, [0; 4])
        }
        PrimOp::DiagEmbed(_) => {
            let d = inputs[0].desc;
            let s = &d.strides;
            let view = View::new(d.offset, &strides(&[&[s[0], 0], &s[1..]]));
            map_view(gpu, 17, y, input_ptr(&inputs[0]), d.meta.dtype, to, walk, view, 0.0, [0; 4])
        }
        PrimOp::Spread(_) => {
            let d = inputs[0].desc;
            let new_dims = out_dims.len() - d.meta.shape.rank();
            let view = View::new(d.offset, &strides(&[&[0; MAX_RANK][..new_dims], &d.strides]));
            map_view(gpu, 0, y, input_ptr(&inputs[0]), d.meta.dtype, to, walk, view, 0.0, [0; 4])
        }
        PrimOp::Slice(sl) => {
            let d = inputs[0].desc;
            let offset = d.offset + sl.start[0] * d.strides[0] + sl.start[1] * d.strides[1];
            let view = View::new(offset, &d.strides);
            map_view(gpu, 0, y, input_ptr(&inputs[0]), d.meta.dtype, to, walk, view, 0.0, [0; 4])
        }
        PrimOp::Pad(p) => {
            let d = inputs[0].desc;
            let dims = d.meta.shape.dims();
            let pad = [p.start[0], p.start[1], dims[0], dims[1]];
            map_view(gpu, 18, y, input_ptr(&inputs[0]), d.meta.dtype, to, walk, View::of(d), 0.0, pad)
        }
        PrimOp::Binary(b) => {
            let code: i32 = match b.0 {
                BinaryOp::Add => 0,
                BinaryOp::Sub => 1,
                BinaryOp::Mul => 2,
                BinaryOp::Div => 3,
            };
            let (x, z) = (inputs[0].desc, inputs[1].desc);
            let kernel = format!("zip_{}", suffix(name, to)?);
            launch!(
                gpu,
                kernel,
                walk.count,
                [code, y, input_ptr(&inputs[0]), input_ptr(&inputs[1]), walk, View::of(x), View::of(z)]
            )
        }
        PrimOp::ScaleCols(_) | PrimOp::ScaleRows(_) => {
            let (a, v) = (inputs[0].desc, inputs[1].desc);
            let s = &v.strides;
            let vb = match op {
                PrimOp::ScaleCols(_) => View::new(v.offset, &strides(&[&[0], s])),
                _ => View::new(v.offset, &strides(&[&[s[0], 0], &s[1..]])),
            };
            let kernel = if v.meta.dtype == a.meta.dtype {
                format!("zip_{}", suffix(name, to)?)
            } else {
                format!("zip_real_{}", suffix(name, to)?)
            };
            launch!(
                gpu,
                kernel,
                walk.count,
                [2i32, y, input_ptr(&inputs[0]), input_ptr(&inputs[1]), walk, View::of(a), vb]
            )
        }
        PrimOp::Reduce(r) => {
            let d = inputs[0].desc;
            let k = r.core_rank;
            let dims = d.meta.shape.dims();
            let items = Walk::new(&dims[k..]);
            let vi = View::new(d.offset, &d.strides[k..]);
            let core = Walk::new(&dims[..k]);
            let vc = View::new(0, &d.strides[..k]);
            let code: i32 = match r.op {
                ReduceOp::Sum => 0,
                ReduceOp::Max => 1,
                ReduceOp::Min => 2,
            };
            let kernel = format!("reduce_{}", suffix(name, to)?);
            launch!(gpu, kernel, items.count, [code, y, input_ptr(&inputs[0]), items, vi, core, vc])
        }
        PrimOp::Fill(f) => {
            let kernel = format!("fill_{}", suffix(name, to)?);
            launch!(gpu, kernel, walk.count, [y, walk.count, f.value])
        }
        PrimOp::Eye(e) => {
            let kernel = format!("eye_{}", suffix(name, to)?);
            launch!(gpu, kernel, walk.count, [y, walk.count, e.n as i64])
        }
        PrimOp::RankMask(r) => {
            let d = inputs[0].desc;
            let items = Walk::new(d.meta.shape.dims());
            let kernel = format!("rank_mask_{}", suffix(name, to)?);
            launch!(gpu, kernel, walk.count, [y, input_ptr(&inputs[0]), items, View::of(d), r.k as i64])
        }
        PrimOp::PairInv(p) => {
            let d = inputs[0].desc;
            let dims = d.meta.shape.dims();
            let items = Walk::new(&dims[1..]);
            let vi = View::new(d.offset, &d.strides[1..]);
            let pair: i32 = match p.pair {
                Pair::Diff => 0,
                Pair::Sum => 1,
            };
            let (reg, param): (i32, f64) = match p.regularize {
                Regularize::Cutoff { relative } => (0, relative),
                Regularize::Lorentzian { eps } => (1, eps),
            };
            let kernel = format!("pair_inv_{}", suffix(name, to)?);
            let (s0, k) = (d.strides[0] as i64, dims[0] as i64);
            launch!(gpu, kernel, walk.count, [pair, reg, param, y, input_ptr(&inputs[0]), items, vi, s0, k])
        }
        PrimOp::PivotPhase(_) => {
            let d = inputs[0].desc;
            let dims = d.meta.shape.dims();
            let cols = Walk::new(&dims[1..]);
            let vc = View::new(d.offset, &d.strides[1..]);
            let kernel = format!("pivot_phase_{}", suffix(name, to)?);
            let (s0, m) = (d.strides[0] as i64, dims[0] as i64);
            launch!(gpu, kernel, cols.count, [y, input_ptr(&inputs[0]), cols, vc, s0, m])
        }
        // Matmul runs on cuBLAS (`matmul.rs`); the extreme mask of the
        // max/min rules is not written for the device.
        PrimOp::Matmul(_) | PrimOp::ExtremeMask(_) => {
            Err(unsupported(name, "no CUDA kernel for this primitive"))
        }
    }
}
