//! 8-point Gauss–Legendre quadrature on [0, 1]: ∫₀¹ g ≈ Σ w_j g(t_j),
//! exact for polynomials of degree ≤ 15. `logm` uses it as the [8/8] Padé
//! approximant of log(1 + x) (Σ w_j x/(1 + t_j x)); `funm_hermitian` with a
//! caller's f as the divided difference ∫₀¹ f′(a + t(b − a)) dt.
//! (Nodes and weights: the tabulated 20-digit Legendre roots and weights on
//! [−1, 1], mapped to [0, 1] and halved, rounded to f64.)

/// The nodes t_j.
pub(crate) const NODES: [f64; 8] = [
    0.019855071751231884,
    0.10166676129318664,
    0.2372337950418355,
    0.4082826787521751,
    0.591717321247825,
    0.7627662049581645,
    0.8983332387068134,
    0.9801449282487681,
];

/// The weights w_j (they sum to 1).
pub(crate) const WEIGHTS: [f64; 8] = [
    0.05061426814518813,
    0.11119051722668724,
    0.15685332293894363,
    0.181341891689181,
    0.181341891689181,
    0.15685332293894363,
    0.11119051722668724,
    0.05061426814518813,
];
