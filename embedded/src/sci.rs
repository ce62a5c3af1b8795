//! Scientific notation without core's float formatting: `{:.2e}` of an
//! `f64` links core's Grisu/Dragon printers (about 11 KiB of flash on the
//! Cortex-M4F), while [`Sci`] needs only integer printing and a few float
//! multiplications, which the firmware links anyway.

use core::fmt;

/// `value` in scientific notation with `decimals` digits after the point,
/// as `{:.N e}` writes it for the magnitudes the firmware prints
/// (`4.77e-7`, `6.1e-5`, `0.00e0`); `NaN` and `inf` as words.
pub struct Sci {
    /// The number.
    pub value: f64,
    /// Digits after the decimal point (at most 6).
    pub decimals: u32,
}

impl fmt::Display for Sci {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let x = self.value;
        if x.is_nan() {
            return f.write_str("NaN");
        }
        if x < 0.0 {
            f.write_str("-")?;
        }
        let mut v = if x < 0.0 { -x } else { x };
        if v == f64::INFINITY {
            return f.write_str("inf");
        }
        let decimals = self.decimals.min(6);
        let scale = 10u64.pow(decimals);
        // v = m · 10^e with 1 ≤ m < 10 (e = 0 for zero).
        let mut e: i32 = 0;
        if v != 0.0 {
            while v >= 10.0 {
                v /= 10.0;
                e += 1;
            }
            while v < 1.0 {
                v *= 10.0;
                e -= 1;
            }
        }
        // Round to `decimals` digits; 9.995 → 10.0 carries into e.
        let mut digits = (v * scale as f64 + 0.5) as u64;
        if digits >= 10 * scale {
            digits /= 10;
            e += 1;
        }
        let (int, frac) = (digits / scale, digits % scale);
        if decimals == 0 {
            write!(f, "{int}e{e}")
        } else {
            write!(f, "{int}.{frac:0width$}e{e}", width = decimals as usize)
        }
    }
}
