//! Report lines without `core::fmt`: a [`Line`] writes `&str` pieces,
//! unsigned and signed integers and numbers in scientific notation straight
//! to a [`Sink`] as bytes. `format_args!` with `{}` of an integer links core's
//! integer `Display` and the `Formatter` machinery (padding, `write_fmt`),
//! `{:.2e}` of an `f64` its Grisu/Dragon float printers (about 11 KiB of
//! flash on the Cortex-M4F), and `{}` of a lindiff `Error` its whole message
//! formatting; these need only integer division and a few float
//! multiplications, which the firmware links anyway.

use crate::sink::Sink;
use lindiff_core::RealScalar;

/// One report line being written to a sink; [`Line::end`] ends it.
pub struct Line<'s, S: Sink>(&'s mut S);

impl<'s, S: Sink> Line<'s, S> {
    /// Starts a line on `sink`.
    pub fn new(sink: &'s mut S) -> Self {
        Line(sink)
    }

    /// Writes `s`.
    pub fn s(self, s: &str) -> Self {
        self.0.put(s.as_bytes());
        self
    }

    /// Writes `s` left-aligned in a field of `width` characters (`{s:<width}`
    /// for ASCII `s`).
    pub fn padded(self, s: &str, width: usize) -> Self {
        const SPACES: &[u8] = b"                                                  ";
        let gap = width.saturating_sub(s.len()).min(SPACES.len());
        self.s(s).bytes(&SPACES[..gap])
    }

    /// Writes `n` in decimal (32-bit divisions: the Cortex-M's own, where
    /// 64-bit ones would link compiler-builtins' `u64_div_rem`).
    pub fn n(self, n: usize) -> Self {
        let mut digits = [0u8; 10];
        let mut at = digits.len();
        let mut rest = n as u32;
        loop {
            at -= 1;
            digits[at] = b'0' + (rest % 10) as u8;
            rest /= 10;
            if rest == 0 {
                break;
            }
        }
        self.bytes(&digits[at..])
    }

    /// Writes `n` in decimal, with a `-` when negative.
    pub fn i(self, n: i32) -> Self {
        let line = if n < 0 { self.s("-") } else { self };
        line.n(n.unsigned_abs() as usize)
    }

    /// Writes `value` in scientific notation with `decimals` digits after
    /// the point (at most 6), as `{:.N e}` writes it for the magnitudes the
    /// firmware prints (`4.77e-7`, `6.1e-5`, `0.00e0`); `NaN` and `inf` as
    /// words. In the firmware's own scalar type: f64 arithmetic in the f32
    /// build would link soft-float division and comparisons.
    pub fn sci<T: RealScalar>(self, value: T, decimals: u32) -> Self {
        if value.partial_cmp(&value).is_none() {
            return self.s("NaN");
        }
        let (zero, one, ten) = (T::zero(), T::one(), T::from_usize(10));
        let line = if value < zero { self.s("-") } else { self };
        let mut v = value.abs();
        if !v.is_finite_real() {
            return line.s("inf");
        }
        let decimals = decimals.min(6);
        let scale = 10u32.pow(decimals);
        // v = m · 10^e with 1 ≤ m < 10 (e = 0 for zero).
        let mut e: i32 = 0;
        if v != zero {
            while v >= ten {
                v = v / ten;
                e += 1;
            }
            while v < one {
                v *= ten;
                e -= 1;
            }
        }
        // Round to `decimals` digits; 9.995 → 10.0 carries into e.
        let mut digits = (v * T::from_usize(scale as usize) + T::from_f64(0.5)).to_f64() as u32;
        if digits >= 10 * scale {
            digits /= 10;
            e += 1;
        }
        let (int, frac) = (digits / scale, digits % scale);
        let mut line = line.n(int as usize);
        if decimals > 0 {
            // `frac` with its leading zeros: the digits of scale + frac
            // after the leading 1.
            let mut buf = [0u8; 7];
            let mut rest = scale + frac;
            for d in buf[..=decimals as usize].iter_mut().rev() {
                *d = b'0' + (rest % 10) as u8;
                rest /= 10;
            }
            buf[0] = b'.';
            line = line.bytes(&buf[..=decimals as usize]);
        }
        line.s("e").i(e)
    }

    /// Ends the line.
    pub fn end(self) {
        self.0.put(b"\n");
    }

    fn bytes(self, b: &[u8]) -> Self {
        self.0.put(b);
        self
    }
}
