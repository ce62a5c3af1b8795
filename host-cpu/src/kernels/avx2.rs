//! Run-time AVX2 dispatch for the short scans and rewrites that every call
//! makes around faer (the non-finite checks, the canonical signs). The crate
//! is built for baseline x86-64, so these loops would be SSE2; with `std` on
//! x86-64 they also get an AVX2 copy, chosen by std's cached CPU detection.
//! Without `std`, or elsewhere, only the portable body exists.

/// `fn $name<T: Field>(args) [-> ret]` that runs `$body(args)` compiled for
/// AVX2 when the CPU has it, else the same body as built. `$body` must be
/// `#[inline(always)]`, so that each copy is compiled for its target.
macro_rules! with_avx2 {
    ($(#[$meta:meta])* $vis:vis fn $name:ident<T: Field>($($arg:ident: $ty:ty),* $(,)?) => $body:ident) => {
        with_avx2! { $(#[$meta])* $vis fn $name<T: Field>($($arg: $ty),*) -> () => $body }
    };
    ($(#[$meta:meta])* $vis:vis fn $name:ident<T: Field>($($arg:ident: $ty:ty),* $(,)?) -> $ret:ty => $body:ident) => {
        $(#[$meta])*
        $vis fn $name<T: Field>($($arg: $ty),*) -> $ret {
            #[cfg(all(feature = "std", target_arch = "x86_64"))]
            {
                /// The body compiled for AVX2.
                ///
                /// # Safety
                /// The CPU must have AVX2.
                #[target_feature(enable = "avx2")]
                unsafe fn avx2<T: Field>($($arg: $ty),*) -> $ret {
                    $body::<T>($($arg),*)
                }
                if std::is_x86_feature_detected!("avx2") {
                    // SAFETY: the CPU has AVX2 (checked just above).
                    return unsafe { avx2::<T>($($arg),*) };
                }
            }
            $body::<T>($($arg),*)
        }
    };
}
