//! 8-point Gauss–Legendre quadrature on [0, 1]: ∫₀¹ g ≈ Σ w_j g(t_j),
//! exact for polynomials of degree ≤ 15, and the 6-point rule (degree ≤ 11)
//! whose difference from it estimates the 6-point rule's error. `logm` uses
//! the 8-point rule as the [8/8] Padé approximant of log(1 + x)
//! (Σ w_j x/(1 + t_j x)); `funm_hermitian` with a caller's f uses both for
//! the divided difference ∫₀¹ f′(a + t(b − a)) dt, and the second-order
//! rule for the Hermite–Genocchi integral.
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

/// The 6-point nodes on [0, 1] (the tabulated 25-digit Legendre roots
/// ±0.2386…, ±0.6612…, ±0.9324… on [−1, 1], mapped and rounded to f64).
pub(crate) const NODES6: [f64; 6] = [
    0.03376524289842399,
    0.16939530676686773,
    0.38069040695840156,
    0.6193095930415985,
    0.8306046932331322,
    0.966234757101576,
];

/// The 6-point weights (halved: they sum to 1).
pub(crate) const WEIGHTS6: [f64; 6] = [
    0.08566224618958518,
    0.1803807865240693,
    0.23395696728634552,
    0.23395696728634552,
    0.1803807865240693,
    0.08566224618958518,
];

/// ∫₀¹ g by both rules: (8-point, 6-point).
pub(crate) fn both(g: impl Fn(f64) -> f64) -> (f64, f64) {
    let rule =
        |nodes: &[f64], weights: &[f64]| nodes.iter().zip(weights).map(|(&t, &w)| w * g(t)).sum::<f64>();
    (rule(&NODES, &WEIGHTS), rule(&NODES6, &WEIGHTS6))
}

#[cfg(test)]
mod tests {
    use super::{both, NODES, NODES6, WEIGHTS, WEIGHTS6};

    /// Each rule integrates t^k exactly up to its degree, and its nodes
    /// are symmetric about ½.
    #[test]
    fn exact_to_their_degree() {
        for k in 0..16 {
            let (eight, six) = both(|t| t.powi(k));
            let exact = 1.0 / f64::from(k + 1);
            assert!((eight - exact).abs() <= 4e-16, "8-point, t^{k}: {eight} vs {exact}");
            if k <= 11 {
                assert!((six - exact).abs() <= 4e-16, "6-point, t^{k}: {six} vs {exact}");
            }
        }
        for (nodes, weights) in [(&NODES[..], &WEIGHTS[..]), (&NODES6[..], &WEIGHTS6[..])] {
            let m = nodes.len();
            for j in 0..m {
                assert!((nodes[j] + nodes[m - 1 - j] - 1.0).abs() <= 2e-16);
                assert_eq!(weights[j], weights[m - 1 - j]);
            }
        }
    }
}
