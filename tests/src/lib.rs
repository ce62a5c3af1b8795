//! Shared infrastructure for lindiff's conformance tests (the tests
//! themselves live in `tests/`).
//!
//! [`handle_provider`] is a provider whose memory is opaque handles into its
//! own storage, the way device memory is: it proves that core drives a
//! provider without ever dereferencing its buffers.

pub mod ad;
#[cfg(feature = "calls")]
pub mod calls;
pub mod counting;
#[cfg(feature = "cuda")]
pub mod cuda;
pub mod dense;
pub mod fuzz;
pub mod handle_provider;
pub mod host;
pub mod hvp;
pub mod losses;
pub mod reference;
pub mod spectral;
pub mod svd_check;
pub mod taylor;

#[cfg(feature = "cuda")]
pub use cuda::CudaStaged;
#[cfg(feature = "blas")]
pub use lindiff_blas::Blas;
pub use lindiff_cpu::Cpu;

use lindiff_core::{Exec, Host, Provider};

/// A host provider the conformance suites run on: every suite is a function
/// generic over `P: TestProvider` taking `&P`, and [`providers!`] turns it
/// into one `#[test]` per provider.
pub trait TestProvider: Provider<Memory = Host> + Copy + Default + Send + Sync + 'static {
    /// The provider with this exec (team width, batch policy).
    fn with_exec(exec: Exec) -> Self;
}

impl TestProvider for Cpu {
    fn with_exec(exec: Exec) -> Self {
        Cpu::with_exec(exec)
    }
}

#[cfg(feature = "blas")]
impl TestProvider for Blas {
    fn with_exec(exec: Exec) -> Self {
        Blas::with_exec(exec)
    }
}

/// One `#[test]` per host provider for each listed suite.
///
/// Each name is a function `fn name<P: TestProvider>(provider: &P)` in the
/// test file; `providers!(name, …)` adds a module `name` with the tests
/// `name::cpu` and `name::blas`, which call it with `Cpu::default()` and
/// `Blas::default()` (the `blas` feature, on by default), and with the
/// `cuda` feature `name::cuda`, which calls it with `CudaStaged` — or
/// prints `skipped: <reason>` and passes when there is no GPU (fails under
/// `LINDIFF_REQUIRE_CUDA=1`), and skips, printed, a suite stopped by an op
/// the device reports `Unsupported` (see `cuda::run_suite`). With the
/// `calls` feature, `name::calls` runs it on `calls::Counted<Cpu>` and
/// prints its provider call count. To run a suite on a threaded exec, build the provider
/// inside it with `P::with_exec(…)`. Filter one provider's runs with
/// `cargo test -- ::blas`.
///
/// ```ignore
/// fn svd_shapes<P: TestProvider>(p: &P) { /* … run(p, …) … */ }
/// lindiff_tests::providers!(svd_shapes);
/// ```
#[macro_export]
macro_rules! providers {
    ($($suite:ident),* $(,)?) => {$(
        mod $suite {
            #[test]
            fn cpu() {
                super::$suite(&$crate::Cpu::default())
            }
            #[cfg(feature = "blas")]
            #[test]
            fn blas() {
                super::$suite(&$crate::Blas::default())
            }
            #[cfg(feature = "cuda")]
            #[test]
            fn cuda() {
                $crate::cuda::run_suite(|provider| super::$suite(provider))
            }
            #[cfg(feature = "calls")]
            #[test]
            fn calls() {
                $crate::calls::run_suite(stringify!($suite), |provider| super::$suite(provider))
            }
        }
    )*};
}
