//! The generated spectral suite: 36 SVD cases and 12 eigh cases
//! drawn from a fixed cycle of shapes (sizes 3–8: square, tall, wide),
//! dtypes (f64, c64), spectra (distinct, a tied pair, a tied triple, a
//! near-tie inside the tie tolerance, zeros, a tie next to a zero, all
//! tied) and scales (1, 1e-150, 1e150). Matrices are Q diag(s) Rᴴ with
//! random unitary Q, R, so their spectra are known by construction.
//!
//! Each case runs every loss of the list below. Whether the loss is
//! differentiable at the case's point is decided from the *designed*
//! spectrum (its tie groups and zeros), never from the code under test:
//!
//! * differentiable → the harness's `check` (forward mode vs central
//!   finite differences, eager and traced gradients bit-identical and
//!   finite, the dot-product test, entrywise FD for ≤ 64 entries);
//! * not differentiable → both reverse faces report
//!   `Error::NotDifferentiable` naming the op, the output and the reason,
//!   and forward mode (which has no cotangent to check) gives a finite
//!   directional derivative.
//!
//! SVD losses: Σ s² (always), the nuclear norm (a kink at a zero value),
//! s₁ + … + s_p and the projectors ⟨W, U_pU_pᴴ⟩, ⟨W, V_pV_pᴴ⟩ with p at the
//! end of the first group (exact at ties), the same through
//! `svd_truncated`, the low-rank reconstruction ⟨W, A_p⟩ through
//! `low_rank_approx`; where a group of ≥ 2 nonzero values exists, p inside
//! it (a projector, a partial sum, a truncation and a low-rank
//! reconstruction splitting the group: reported); the projector onto a
//! null-space vector of a tall matrix (reported); ⟨w, u₀⟩ of real input
//! (reported at a tie in the first group). A generic functional ⟨w, u₀⟩
//! rather than one entry U[0, 0]: the gauge check is first order, and the
//! basis a forward picks inside a tied group can make one entry stationary
//! under rotations of the group (LAPACK's gesdd gives U[0, 1] ≈ 1e-15 on
//! wide matrices), where the cotangent equals a projector loss's and no
//! check on it can tell them apart. eigh losses: Σ w², w₁ + … + w_p
//! and the projector onto the eigenvectors of the lowest group (exact), and
//! the same splitting a tied group (reported).

use lindiff_core::{Element, Host, Provider, Scalar};
use lindiff_tests::ad::{check_with, forward, is_forward_tie, CheckOptions, Input, Loss};
use lindiff_tests::dense::{Dense, Re, Rng};
use lindiff_tests::spectral::{assert_reported, EighLoss, SvdLoss, Via};
use lindiff_tests::TestProvider;
use num_complex::Complex;

type C64 = Complex<f64>;

/// A spectrum's shape before it is fitted to k values.
#[derive(Clone, Copy, Debug)]
enum Pattern {
    Distinct,
    TiedPair,
    TiedTriple,
    NearTie,
    Zeros,
    TieAndZero,
    AllTied,
}

const PATTERNS: [Pattern; 7] = [
    Pattern::Distinct,
    Pattern::TiedPair,
    Pattern::TiedTriple,
    Pattern::NearTie,
    Pattern::Zeros,
    Pattern::TieAndZero,
    Pattern::AllTied,
];

/// (m, n): square, tall and wide, sizes 3–8.
const SHAPES: [(usize, usize); 12] =
    [(3, 3), (4, 3), (3, 4), (5, 5), (6, 4), (4, 6), (7, 5), (5, 7), (8, 8), (8, 3), (3, 8), (6, 6)];

const SCALES: [f64; 3] = [1.0, 1e-150, 1e150];

/// A run of equal designed values (a near-tie's members differ by a few
/// ulps, inside the tie tolerance: one group).
#[derive(Clone, Copy, Debug)]
struct Group {
    value: f64,
    count: usize,
    near: bool,
}

impl Group {
    fn one(value: f64) -> Group {
        Group { value, count: 1, near: false }
    }
}

/// The designed groups, in the op's order (descending for the SVD, `sign`
/// = 1; ascending for eigh, `sign` = −1 mirrors the values), fitted to k.
fn design(pattern: Pattern, k: usize, sign: f64) -> Vec<Group> {
    let tail = |start: f64, count: usize| (0..count).map(move |j| Group::one(start - 0.25 * j as f64));
    let groups: Vec<Group> = match pattern {
        Pattern::Distinct => tail(0.5 * k as f64 + 0.5, k).collect(),
        Pattern::TiedPair => {
            [Group { value: 3.0, count: 2, near: false }].into_iter().chain(tail(2.0, k)).collect()
        }
        Pattern::TiedTriple => [Group::one(4.0), Group { value: 3.0, count: 3, near: false }]
            .into_iter()
            .chain(tail(2.0, k))
            .collect(),
        Pattern::NearTie => [Group::one(3.0), Group { value: 2.0, count: 2, near: true }]
            .into_iter()
            .chain(tail(1.5, k))
            .collect(),
        Pattern::Zeros => {
            let zeros = if k < 5 { 1 } else { 2 };
            tail(2.0, k - zeros).chain([Group { value: 0.0, count: zeros, near: false }]).collect()
        }
        Pattern::TieAndZero => [Group { value: 2.0, count: 2, near: false }]
            .into_iter()
            .chain(tail(1.5, k.saturating_sub(3)))
            .chain([Group::one(0.0)])
            .collect(),
        Pattern::AllTied => vec![Group { value: 1.0, count: k, near: false }],
    };
    // Fit to k values: clip the group that crosses k, drop the rest.
    let mut fitted = Vec::new();
    let mut left = k;
    for g in groups {
        if left == 0 {
            break;
        }
        let count = g.count.min(left);
        left -= count;
        fitted.push(Group { value: sign * g.value, count, ..g });
    }
    fitted
}

/// The values of `groups` (a near-tie's second member 4 ulps below).
fn values(groups: &[Group], scale: f64) -> Vec<f64> {
    let mut s = Vec::new();
    for g in groups {
        for i in 0..g.count {
            let v = if g.near && i > 0 { g.value * (1.0 - 4.0 * f64::EPSILON) } else { g.value };
            s.push(v * scale);
        }
    }
    s
}

/// What a loss should do at the case's point.
#[derive(Clone, Copy, Debug)]
enum Expect {
    Exact,
    Reported(&'static str, &'static str, &'static str),
}

const SPLIT_U: Expect = Expect::Reported("svd", "u", "tied singular values");
const SPLIT_TRUNCATED: Expect = Expect::Reported("svd_truncated", "u", "tied singular values");
const SPLIT_LOW_RANK: Expect = Expect::Reported("low_rank_approx", "a_p", "tied singular values");
const SPLIT_S: Expect = Expect::Reported("svd", "s", "tied singular values");
const KINK: Expect = Expect::Reported("svd", "s", "kink");
const NULL: Expect = Expect::Reported("svd", "u", "null space");
const SPLIT_V: Expect = Expect::Reported("eigh", "v", "tied eigenvalues");
const SPLIT_W: Expect = Expect::Reported("eigh", "w", "tied eigenvalues");

/// Where a designed spectrum can be cut.
struct Cuts {
    /// The end of the first group (its values nonzero).
    whole: usize,
    /// A cut inside the first group of ≥ 2 nonzero values, if any.
    split: Option<usize>,
    /// The index of the first zero value, if any.
    zero: Option<usize>,
}

fn cuts(groups: &[Group]) -> Cuts {
    let mut start = 0;
    let mut split = None;
    let mut zero = None;
    for g in groups {
        if g.value == 0.0 {
            zero = zero.or(Some(start));
        } else if g.count >= 2 {
            split = split.or(Some(start + 1));
        }
        start += g.count;
    }
    Cuts { whole: groups[0].count, split, zero }
}

/// The SVD losses of a case and what each should do.
fn svd_losses(groups: &[Group], m: usize, n: usize, complex: bool) -> Vec<(SvdLoss, Expect)> {
    let c = cuts(groups);
    let k = m.min(n);
    let mut list = vec![
        (SvdLoss::SumSquares, Expect::Exact),
        (SvdLoss::Nuclear(Via::Vals), if c.zero.is_some() { KINK } else { Expect::Exact }),
        (SvdLoss::Top(c.whole), Expect::Exact),
        (SvdLoss::LowRank(c.whole), Expect::Exact),
    ];
    // A projector onto all m columns of U (or all n of V) is the identity:
    // a constant loss, which finite differences cannot resolve at 1e±150.
    if c.whole < m {
        list.push((SvdLoss::ProjU(c.whole), Expect::Exact));
        list.push((SvdLoss::Truncated(c.whole), Expect::Exact));
    }
    if c.whole < n {
        list.push((SvdLoss::ProjV(c.whole), Expect::Exact));
    }
    if let Some(p) = c.split {
        list.push((SvdLoss::ProjU(p), SPLIT_U));
        list.push((SvdLoss::Top(p), SPLIT_S));
        list.push((SvdLoss::Truncated(p), SPLIT_TRUNCATED));
        list.push((SvdLoss::LowRank(p), SPLIT_LOW_RANK));
    }
    if let (Some(z), true) = (c.zero, m > k) {
        list.push((SvdLoss::ColU(z), NULL));
    }
    if !complex {
        list.push((SvdLoss::Column(0), if groups[0].count >= 2 { SPLIT_U } else { Expect::Exact }));
    }
    list
}

/// The eigh losses of a case (groups ascending) and what each should do.
fn eigh_losses(groups: &[Group]) -> Vec<(EighLoss, Expect)> {
    let c = cuts(groups);
    let mut list = vec![(EighLoss::SumSquares, Expect::Exact), (EighLoss::Bottom(c.whole), Expect::Exact)];
    if c.whole < groups.iter().map(|g| g.count).sum() {
        list.push((EighLoss::Proj(0, c.whole), Expect::Exact));
    }
    if let Some(p) = c.split {
        list.push((EighLoss::Proj(0, p), SPLIT_V));
        list.push((EighLoss::Bottom(p), SPLIT_W));
    }
    list
}

/// Tallies over the suite.
#[derive(Default)]
struct Tally {
    cases: usize,
    exact: usize,
    reported: usize,
    worst_forward: f64,
    worst_grad: f64,
}

/// Runs one loss with its expectation.
fn run<T: Scalar + Element, P: Provider<Memory = Host> + Clone, L: Loss>(
    p: &P,
    label: &str,
    loss: &L,
    expect: Expect,
    xs: &[Input<T>],
    tally: &mut Tally,
) where
    Re<T>: Element,
{
    println!("{label}: {} → {expect:?}", loss.name());
    match expect {
        Expect::Exact => {
            let report = check_with(p, loss, xs, CheckOptions::default().at_ties());
            tally.exact += 1;
            tally.worst_forward = tally.worst_forward.max(report.forward_vs_fd);
            tally.worst_grad = tally.worst_grad.max(report.grad_vs_fd);
        }
        Expect::Reported(op, output, why) => {
            assert_reported(p, loss, xs, (op, output, why));
            // Forward mode has no cotangent to check: where the direction
            // couples tied vectors it reports that; elsewhere its tangent
            // follows the forward's gauge and must at least be finite.
            let mut rng = Rng::new(17);
            let ds: Vec<Input<T>> = xs.iter().map(|x| x.random_direction(&mut rng)).collect();
            match forward(p.clone(), loss, xs, &ds) {
                Ok(d) => assert!(d.is_finite(), "{label}: {}: forward-mode derivative {d}", loss.name()),
                Err(e) => assert!(is_forward_tie(&e), "{label}: forward: {e}"),
            }
            tally.reported += 1;
        }
    }
}

/// A fixed weight matrix (rows×cols, one per seed).
fn weight<T: Scalar>(rows: usize, cols: usize, seed: u64) -> Input<T> {
    Input::matrix(&Rng::new(seed).matrix::<T>(rows, cols))
}

fn svd_case<T: Scalar + Element, P: Provider<Memory = Host> + Clone>(p: &P, i: usize, tally: &mut Tally)
where
    Re<T>: Element,
{
    let (m, n) = SHAPES[i % SHAPES.len()];
    let pattern = PATTERNS[i % PATTERNS.len()];
    let scale = SCALES[(i / SHAPES.len()) % SCALES.len()];
    let groups = design(pattern, m.min(n), 1.0);
    let s = values(&groups, scale);
    let a: Dense<T> = Rng::new(1000 + i as u64).with_spectrum(m, n, &s);
    let label = format!("svd case {i}: {m}×{n} {} {pattern:?} ×{scale:e}", T::DTYPE.name());
    for (loss, expect) in svd_losses(&groups, m, n, T::DTYPE.is_complex()) {
        let w = match loss {
            SvdLoss::ProjV(_) => Some(weight::<T>(n, n, 7)),
            SvdLoss::LowRank(_) => Some(weight::<T>(m, n, 7)),
            SvdLoss::ProjU(_) | SvdLoss::Truncated(_) | SvdLoss::ColU(_) => Some(weight::<T>(m, m, 7)),
            SvdLoss::Column(_) => Some(weight::<T>(m, 1, 7)),
            _ => None,
        };
        let xs: Vec<Input<T>> = [Some(Input::matrix(&a)), w].into_iter().flatten().collect();
        run(p, &label, &loss, expect, &xs, tally);
    }
    tally.cases += 1;
}

fn eigh_case<T: Scalar + Element, P: Provider<Memory = Host> + Clone>(p: &P, i: usize, tally: &mut Tally)
where
    Re<T>: Element,
{
    let n = 3 + i % 6;
    let pattern =
        [Pattern::Distinct, Pattern::TiedPair, Pattern::TiedTriple, Pattern::NearTie, Pattern::AllTied]
            [i % 5];
    let scale = SCALES[i % SCALES.len()];
    // Ascending eigenvalues: the SVD design mirrored and shifted to mixed
    // signs (‖A‖ small against the gaps, so finite differences resolve the
    // eigenvectors to 1e-9).
    let mut groups = design(pattern, n, -1.0);
    for g in &mut groups {
        g.value += 3.5;
    }
    let w: Vec<f64> = values(&groups, scale);
    let q = Rng::new(2000 + i as u64).unitary::<T>(n);
    let wr: Vec<Re<T>> = w.iter().map(|&x| <Re<T> as Scalar>::from_f64(x)).collect();
    let a = q.scale_cols(&wr).matmul(&q.adjoint());
    let label = format!("eigh case {i}: {n}×{n} {} {pattern:?} ×{scale:e}", T::DTYPE.name());
    for (loss, expect) in eigh_losses(&groups) {
        let xs: Vec<Input<T>> = match loss {
            EighLoss::Proj(..) => vec![Input::matrix(&a), weight::<T>(n, n, 9)],
            _ => vec![Input::matrix(&a)],
        };
        run(p, &label, &loss, expect, &xs, tally);
    }
    tally.cases += 1;
}

fn generated_spectral_suite<P: TestProvider>(p: &P) {
    let mut tally = Tally::default();
    for i in 0..36 {
        if (i / 3) % 2 == 0 {
            svd_case::<f64, P>(p, i, &mut tally);
        } else {
            svd_case::<C64, P>(p, i, &mut tally);
        }
    }
    for i in 0..12 {
        if i % 2 == 0 {
            eigh_case::<f64, P>(p, i, &mut tally);
        } else {
            eigh_case::<C64, P>(p, i, &mut tally);
        }
    }
    println!(
        "spectral suite: {} cases, {} differentiable losses (worst forward vs FD {:.1e}, gradient vs FD \
         {:.1e}), {} reported",
        tally.cases, tally.exact, tally.worst_forward, tally.worst_grad, tally.reported
    );
    assert!(tally.cases >= 30 && tally.reported > 0);
}

lindiff_tests::providers!(generated_spectral_suite);
