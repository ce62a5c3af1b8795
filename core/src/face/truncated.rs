//! Real slicing of a truncated SVD on the direct face (the eager face's
//! twin is in `ad/truncated.rs`), where the rank chosen from the data is a
//! value that can be read before the next op is built.
//!
//! Every face's [`Ops::svd_truncated`] returns the masked, static-shape
//! form (the triplets beyond `rank` zeroed), which is what a traced program
//! needs and what keeps the eager and traced gradients bit-identical. On a
//! concrete face `svd_truncated_sliced` also cuts the factors to
//! p = max over the batch of `rank` ([`SvdTruncatedFactors::sliced`]); the
//! slices are linear primitives, so the derivative is the masked one's.

use super::direct::{Direct, Tensor};
use super::{Ops, SvdTruncatedFactors};
use crate::error::Result;
use crate::memory::Host;
use crate::op::Truncation;
use crate::provider::Provider;

/// The largest rank over the batch items (0 for an empty batch).
pub(crate) fn largest_rank(rank: &Tensor) -> Result<usize> {
    let ranks: &[i64] = rank.as_slice()?;
    Ok(ranks.iter().map(|&r| usize::try_from(r).unwrap_or(0)).max().unwrap_or(0))
}

impl<P: Provider<Memory = Host>> Direct<P> {
    /// [`Ops::svd_truncated`] cut to p = the largest `rank` over the
    /// batch: u m×p, s p, vh p×n (an item of lower rank keeps zeros up to p).
    ///
    /// # Errors
    /// As [`Ops::svd_truncated`].
    pub fn svd_truncated_sliced(
        &mut self,
        a: &Tensor,
        keep: Truncation,
    ) -> Result<SvdTruncatedFactors<Tensor>> {
        let t = self.svd_truncated(a, keep)?;
        let p = largest_rank(&t.rank)?;
        t.sliced(self, p)
    }
}
