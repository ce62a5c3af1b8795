//! The execution token: how wide the thread team is and how a batch is split
//! across it. A provider carries one [`Exec`], so its `workspace` and
//! `run_into` see the same plan by construction.

/// How a batch of matrices is spread over the team.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum BatchPolicy {
    /// Split the batch across threads when it has at least as many matrices
    /// as the team is wide; otherwise give each matrix the whole team.
    #[default]
    Auto,
    /// Always split the batch across threads; each matrix runs serially.
    Lanes,
    /// Always run one matrix at a time with the whole team.
    WholeTeam,
}

/// Team width plus batch policy.
///
/// ```
/// use lindiff_core::{Exec, LanePlan};
/// let exec = Exec::with_threads(4);
/// assert_eq!(exec.plan(100), LanePlan { lanes: 4, threads_per_matrix: 1 });
/// assert_eq!(exec.plan(2), LanePlan { lanes: 1, threads_per_matrix: 4 });
/// assert_eq!(Exec::serial().plan(100), LanePlan { lanes: 1, threads_per_matrix: 1 });
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Exec {
    threads: usize,
    policy: BatchPolicy,
}

impl Default for Exec {
    fn default() -> Self {
        Exec::serial()
    }
}

/// How one call runs: `lanes` batch lanes in parallel, each matrix with
/// `threads_per_matrix` threads (1 = `Par::Seq`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LanePlan {
    /// Parallel batch lanes (each needs its own scratch region).
    pub lanes: usize,
    /// Threads given to one matrix.
    pub threads_per_matrix: usize,
}

impl Exec {
    /// One thread: everything runs serially.
    pub const fn serial() -> Exec {
        Exec { threads: 1, policy: BatchPolicy::Auto }
    }

    /// A team of `threads` threads (0 is taken as 1) with the `Auto` policy.
    pub const fn with_threads(threads: usize) -> Exec {
        Exec { threads: if threads == 0 { 1 } else { threads }, policy: BatchPolicy::Auto }
    }

    /// The same team with another batch policy.
    pub const fn policy(self, policy: BatchPolicy) -> Exec {
        Exec { threads: self.threads, policy }
    }

    /// Team width.
    pub const fn threads(&self) -> usize {
        self.threads
    }

    /// The batch policy.
    pub const fn batch_policy(&self) -> BatchPolicy {
        self.policy
    }

    /// The plan for a batch of `batch` matrices.
    pub const fn plan(&self, batch: usize) -> LanePlan {
        let split = match self.policy {
            BatchPolicy::Auto => batch >= self.threads,
            BatchPolicy::Lanes => true,
            BatchPolicy::WholeTeam => false,
        };
        if split && self.threads > 1 {
            let lanes = if batch < self.threads { batch } else { self.threads };
            LanePlan { lanes: if lanes == 0 { 1 } else { lanes }, threads_per_matrix: 1 }
        } else {
            LanePlan { lanes: 1, threads_per_matrix: self.threads }
        }
    }
}
