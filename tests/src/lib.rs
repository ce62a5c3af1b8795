//! Shared infrastructure for lindiff's conformance tests (the tests
//! themselves live in `tests/`).
//!
//! [`handle_provider`] is a provider whose memory is opaque handles into its
//! own storage, the way device memory is: it proves that core drives a
//! provider without ever dereferencing its buffers.

pub mod ad;
pub mod counting;
pub mod dense;
pub mod handle_provider;
pub mod host;
pub mod losses;
pub mod spectral;
