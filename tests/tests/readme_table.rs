//! The README's op × provider × derivative table is rendered from the code
//! and must equal the README's copy, between the markers
//! `<!-- op-table:begin -->` and `<!-- op-table:end -->`.
//!
//! * op and family: `LinalgOp::all()` and each op's `family()`;
//! * derivative: `ad_support()` per output;
//! * blas: [`BLAS_LAPACK`], the ops lindiff-blas runs through LAPACK (the
//!   others it hands to host-cpu), checked against
//!   `lindiff_blas::uses_lapack` when the `blas` feature is on (`cargo
//!   xtask test`);
//! * cuda: [`CUDA_UNSUPPORTED`], checked against `lindiff_cuda::ops::runs`
//!   when the `cuda` feature is on (the "cuda (no GPU)" step of `cargo xtask
//!   test`);
//! * wasm: the dtypes `wasm/Cargo.toml` builds lindiff-cpu with;
//! * embedded: the op families `embedded/Cargo.toml` links, with the
//!   families they turn on in `host-cpu/Cargo.toml`.
//!
//! When the README differs, the test prints the fresh table; run it with
//! `LINDIFF_BLESS=1` to write it into the README:
//!
//! ```sh
//! LINDIFF_BLESS=1 cargo test -p lindiff-tests --test readme_table
//! ```

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use lindiff_core::ad::{ad_support, ad_support_ops, ad_support_second_order, Support};
use lindiff_core::op::LinalgOp;
use lindiff_core::Op;

const BEGIN: &str = "<!-- op-table:begin -->";
const END: &str = "<!-- op-table:end -->";

/// The ops lindiff-blas runs through a LAPACK routine (real and complex
/// dtypes alike); every other op runs on host-cpu's faer kernels there.
const BLAS_LAPACK: &[&str] = &[
    "svd",
    "svd_vals",
    "svd_full",
    "svd_truncated",
    "qr",
    "rank_revealing_qr",
    "eigh",
    "eigh_vals",
    "eig",
    "eig_vals",
    "cholesky",
    "lu",
    "lu_factor",
    "lu_factor_solve",
    "lu_solve_prepared",
    "triangular_solve",
];

/// The linear-algebra ops lindiff-cuda answers with `Error::Unsupported`.
const CUDA_UNSUPPORTED: &[&str] = &[
    "rank_revealing_qr",
    "full_piv_lu",
    "full_piv_lu_factor",
    "full_piv_lu_solve",
    "full_piv_lu_solve_prepared",
    "householder_qr_factor",
    "householder_qr_append",
    "householder_qr_q",
    "householder_qr_r",
    "householder_qr_apply",
    "adjugate",
    "matrix_rank",
    "funm_hermitian",
    "funm_hermitian_factors",
    "funm_hermitian_frechet",
    "funm_hermitian_second",
    "expm",
    "expm_frechet",
    "expm_factors",
    "expm_frechet_factored",
    "logm",
    "logm_frechet",
    "sqrtm",
    "sqrtm_frechet",
];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("tests/ sits in the workspace").to_path_buf()
}

fn read(path: &str) -> String {
    std::fs::read_to_string(root().join(path)).unwrap_or_else(|e| panic!("cannot read {path}: {e}"))
}

/// The value list of `key = [...]` (or `key = { ..., features = [...] }`
/// for `features`) on the line of a Cargo.toml that starts with `key`.
fn toml_list(text: &str, key: &str, field: Option<&str>) -> Vec<String> {
    let line = text
        .lines()
        .find(|l| {
            l.trim_start().starts_with(&format!("{key} ")) || l.trim_start().starts_with(&format!("{key}="))
        })
        .unwrap_or_else(|| panic!("no `{key}` line"));
    let from = match field {
        Some(f) => &line[line.find(f).unwrap_or_else(|| panic!("`{key}` has no `{f}`"))..],
        None => line,
    };
    let list = &from[from.find('[').expect("a list")..];
    let list = &list[..=list.find(']').expect("a one-line list")];
    list.trim_matches(['[', ']'])
        .split(',')
        .map(|s| s.trim().trim_matches('"').to_string())
        .filter(|s| !s.is_empty())
        .collect()
}

/// The op families (lindiff-core's `op-*` features) the firmware links by
/// default (its lindiff-cpu dependency's features), or with its `matfun`
/// feature as well: closed under host-cpu's feature implications.
fn embedded_families(with_matfun: bool) -> BTreeSet<String> {
    let firmware = read("embedded/Cargo.toml");
    let cpu = read("host-cpu/Cargo.toml");
    let mut todo: Vec<String> = toml_list(&firmware, "lindiff-cpu", Some("features"));
    if with_matfun {
        let extra = toml_list(&firmware, "matfun", None);
        todo.extend(extra.iter().filter_map(|f| f.strip_prefix("lindiff-cpu/")).map(str::to_string));
    }
    let mut families = BTreeSet::new();
    while let Some(f) = todo.pop() {
        if !f.starts_with("op-") || !families.insert(f.clone()) {
            continue;
        }
        todo.extend(toml_list(&cpu, &f, None).into_iter().filter(|g| g.starts_with("op-")));
    }
    families
}

/// The dtypes the wasm crate builds lindiff-cpu with.
fn wasm_dtypes() -> Vec<String> {
    let wasm = read("wasm/Cargo.toml");
    toml_list(&wasm, "lindiff-cpu", Some("features"))
        .into_iter()
        .filter(|f| matches!(f.as_str(), "f32" | "f64" | "c32" | "c64"))
        .collect()
}

/// One output's derivative, short.
fn mark(name: &str, support: &Support) -> String {
    match support {
        Support::Supported { caveat: None } => format!("{name} ✓"),
        Support::Supported { caveat: Some(_) } => format!("{name} ✓*"),
        Support::NotDifferentiable { .. } => format!("{name} ✗"),
        Support::Unsupported { .. } => format!("{name} –"),
    }
}

/// The table, as the README holds it between the markers.
fn render() -> String {
    let (families, matfun) = (embedded_families(false), embedded_families(true));
    let wasm = wasm_dtypes().join(", ");
    let mut out = String::new();
    out.push_str(
        "| op | family | cpu (faer) | blas | cuda (unverified on a GPU) | wasm | embedded | derivative per output | second order |\n",
    );
    out.push_str("|---|---|---|---|---|---|---|---|---|\n");
    for op in LinalgOp::all() {
        let name = op.name();
        let family = op.family().feature;
        let blas = if BLAS_LAPACK.contains(&name) { "LAPACK" } else { "faer" };
        let cuda = if CUDA_UNSUPPORTED.contains(&name) { "–" } else { "✓" };
        let embedded = match (families.contains(family), matfun.contains(family)) {
            (true, _) => "✓",
            (false, true) => "`matfun`",
            _ => "–",
        };
        let second = mark("", &ad_support_second_order(&Op::Linalg(op.clone())));
        let support = ad_support(&Op::Linalg(op));
        let derivative: Vec<String> = support.iter().map(|(o, s)| mark(o, s)).collect();
        out.push_str(&format!(
            "| `{name}` | `{family}` | ✓ | {blas} | {cuda} | {wasm} | {embedded} | {} | {} |\n",
            derivative.join(", "),
            second.trim()
        ));
    }
    // The primitives in one row: the ones without a full derivative named.
    let mut prims = 0;
    let mut partial = Vec::new();
    for op in ad_support_ops().filter(|op| matches!(op, Op::Prim(_))) {
        prims += 1;
        for (_, s) in ad_support(&op) {
            if !matches!(s, Support::Supported { caveat: None }) {
                let m = mark(&format!("`{}`", op.name()), &s);
                if !partial.contains(&m) {
                    partial.push(m);
                }
            }
        }
    }
    out.push_str(&format!(
        "| {prims} primitives (matmul, maps, reductions, masks, …) | core | ✓ | faer | ✓ except `extreme_mask` | {wasm} | ✓ | ✓, but {} | as first order |\n",
        partial.join(", ")
    ));
    out
}

#[test]
fn readme_table_is_current() {
    let path = root().join("README.md");
    let readme = std::fs::read_to_string(&path).expect("README.md");
    let begin = readme.find(BEGIN).expect("README.md has the op-table:begin marker") + BEGIN.len();
    let end = readme.find(END).expect("README.md has the op-table:end marker");
    let fresh = format!("\n{}", render());
    if readme[begin..end] == fresh {
        return;
    }
    if std::env::var("LINDIFF_BLESS").is_ok_and(|v| v == "1") {
        let updated = format!("{}{fresh}{}", &readme[..begin], &readme[end..]);
        std::fs::write(&path, updated).expect("write README.md");
        eprintln!("README.md: op table rewritten");
        return;
    }
    panic!(
        "README.md's op table differs from the code. Paste this between the markers, or run \
         `LINDIFF_BLESS=1 cargo test -p lindiff-tests --test readme_table`:\n{BEGIN}{fresh}{END}"
    );
}

#[cfg(feature = "blas")]
#[test]
fn blas_column_matches_lindiff_blas() {
    use lindiff_core::DType;
    for op in LinalgOp::all() {
        for dtype in [DType::F64, DType::C64] {
            assert_eq!(
                lindiff_blas::uses_lapack(&op, dtype),
                BLAS_LAPACK.contains(&op.name()),
                "{} ({dtype:?}): update BLAS_LAPACK",
                op.name()
            );
        }
    }
}

#[cfg(feature = "cuda")]
#[test]
fn cuda_column_matches_lindiff_cuda() {
    use lindiff_cuda::ops::{runs, Runs};
    for op in LinalgOp::all() {
        let name = op.name();
        let unsupported = matches!(runs(&Op::Linalg(op)), Runs::Unsupported(_));
        assert_eq!(unsupported, CUDA_UNSUPPORTED.contains(&name), "{name}: update CUDA_UNSUPPORTED");
    }
    for op in ad_support_ops().filter(|op| matches!(op, Op::Prim(_))) {
        let unsupported = matches!(runs(&op), Runs::Unsupported(_));
        assert_eq!(unsupported, op.name() == "extreme_mask", "{}: update the primitives row", op.name());
    }
}
