//! The conformance suites (every file that uses `providers!`) as ONE test
//! binary, for the CUDA device check: `host-cuda/device-check.sh` builds it
//! stripped in release mode with `--no-default-features --features cuda`
//! (no OpenBLAS) and runs it filtered to `::cuda` on a GPU machine.
//! Left out: suites that install a counting `#[global_allocator]` (one per
//! binary): alloc_free.rs, ad_program.rs, prims.rs — their own test binaries
//! carry the `cuda` arm too and the device check runs them separately.
//!
//! **Adding a suite file** `tests/tests/<name>.rs` that uses `providers!`:
//! add `#[path = "../<name>.rs"] mod <name>;` below (alphabetical), or, if
//! it cannot share a binary (its own `#[global_allocator]`), add it to
//! `SEPARATE` in `tests/tests/cuda_suite_list.rs` with the reason and to
//! the separate binaries of `host-cuda/device-check.sh`. The test
//! `cuda_suite_list` fails (in every `cargo test`, no GPU needed) when a
//! suite is in neither place.

#[path = "../ad_cholesky.rs"]
mod ad_cholesky;
#[path = "../ad_cholesky_triangle.rs"]
mod ad_cholesky_triangle;
#[path = "../ad_composites.rs"]
mod ad_composites;
#[path = "../ad_det.rs"]
mod ad_det;
#[path = "../ad_eig.rs"]
mod ad_eig;
#[path = "../ad_eigh.rs"]
mod ad_eigh;
#[path = "../ad_f32.rs"]
mod ad_f32;
#[path = "../ad_factorizations.rs"]
mod ad_factorizations;
#[path = "../ad_gauge.rs"]
mod ad_gauge;
#[path = "../ad_lu.rs"]
mod ad_lu;
#[path = "../ad_pinv.rs"]
mod ad_pinv;
#[path = "../ad_qr.rs"]
mod ad_qr;
#[path = "../ad_recombine.rs"]
mod ad_recombine;
#[path = "../ad_second_order.rs"]
mod ad_second_order;
#[path = "../ad_seed.rs"]
mod ad_seed;
#[path = "../ad_solve.rs"]
mod ad_solve;
#[path = "../ad_spectral_suite.rs"]
mod ad_spectral_suite;
#[path = "../ad_support.rs"]
mod ad_support;
#[path = "../ad_svd.rs"]
mod ad_svd;
#[path = "../ad_svd_truncated.rs"]
mod ad_svd_truncated;
#[path = "../ad_transpose.rs"]
mod ad_transpose;
#[path = "../cholesky.rs"]
mod cholesky;
#[path = "../composites.rs"]
mod composites;
#[path = "../det.rs"]
mod det;
#[path = "../direct_plans.rs"]
mod direct_plans;
#[path = "../eig.rs"]
mod eig;
#[path = "../eigh_large.rs"]
mod eigh_large;
#[path = "../face_methods.rs"]
mod face_methods;
#[path = "../fusion.rs"]
mod fusion;
#[path = "../lu.rs"]
mod lu;
#[path = "../matrix_exponential.rs"]
mod matrix_exponential;
#[path = "../matrix_functions.rs"]
mod matrix_functions;
#[path = "../matrix_log_sqrt.rs"]
mod matrix_log_sqrt;
#[path = "../outputs_on_error.rs"]
mod outputs_on_error;
#[path = "../prefill.rs"]
mod prefill;
#[path = "../prims_mask.rs"]
mod prims_mask;
#[path = "../prims_spectral.rs"]
mod prims_spectral;
#[path = "../qr.rs"]
mod qr;
#[path = "../recombine.rs"]
mod recombine;
#[path = "../solve.rs"]
mod solve;
#[path = "../svd.rs"]
mod svd;
#[path = "../svd_large.rs"]
mod svd_large;
