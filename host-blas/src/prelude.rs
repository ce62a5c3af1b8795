//! Everything a user of lindiff-blas needs, in one import: lindiff-cpu's
//! prelude (the faces, the handles losses are written with, options,
//! factors, errors) and the LAPACK provider [`Blas`].
//!
//! ```
//! use lindiff_blas::prelude::*;
//! let mut la = Direct::new(Blas::new());
//! let a = la.tensor_row_major(2, 2, &[2.0, 1.0, 1.0, 2.0])?;
//! let out = la.value_and_grad([&a], |[a]| a.eigvalsh().get(1))?; // λ_max
//! assert!((out.value - 3.0).abs() < 1e-14);
//! # Ok::<(), Error>(())
//! ```

pub use crate::Blas;
pub use lindiff_cpu::prelude::*;
