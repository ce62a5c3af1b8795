//! [`Eager::svd_truncated_sliced`]: the eager face's twin of the direct
//! face's real slicing of a truncated SVD (`face/truncated.rs`).

use super::{Eager, Tracked};
use crate::error::Result;
use crate::face::direct::{Direct, Tensor};
use crate::face::truncated::largest_rank;
use crate::face::{Ops, SvdTruncatedFactors};
use crate::memory::Host;
use crate::op::Truncation;
use crate::provider::Provider;

impl<P: Provider<Memory = Host>, const N: usize, const V: usize> Eager<Direct<P>, N, V> {
    /// [`Ops::svd_truncated`] cut to p = the largest `rank` over the
    /// batch, on the tape: u m×p, s p, vh p×n. Its gradient is the masked
    /// form's (the slices' transposes pad with zeros), though not always bit
    /// for bit, as the recorded programs differ.
    ///
    /// # Errors
    /// As [`Ops::svd_truncated`].
    pub fn svd_truncated_sliced(
        &mut self,
        a: &Tracked<Tensor>,
        keep: Truncation,
    ) -> Result<SvdTruncatedFactors<Tracked<Tensor>>> {
        let t = self.svd_truncated(a, keep)?;
        let p = largest_rank(t.rank.value())?;
        t.sliced(self, p)
    }
}
