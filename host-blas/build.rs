//! Links the system OpenBLAS (Debian's `libopenblas-dev`), which provides
//! both BLAS and LAPACK symbols. Nothing is downloaded or built here.

fn main() {
    println!("cargo:rustc-link-lib=dylib=openblas");
    println!("cargo:rerun-if-changed=build.rs");
}
