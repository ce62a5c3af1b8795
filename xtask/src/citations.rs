//! `cargo xtask citations`: every document, file or section the tree cites
//! must exist, and nothing may cite what is not part of the tree.
//!
//! Scans the `*.rs`, `*.md`, `*.js`, `*.mjs`, `*.html`, `*.toml` and `*.sh`
//! files of the repository (skipping `target/`, `node_modules/`, `.git/`,
//! the generated web packages and the vendored crates' own sources) and
//! reports, as `file:line: …`:
//!
//! * a cited path (`docs/ad-rules.md`, `host-cpu/src/kernels/svd_guard.rs`,
//!   `README.md#run-the-tests`) that names no file — resolved against the
//!   repository root, the citing file's folder and each folder above it —
//!   or, for `.md#anchor`, a heading of that file; a markdown link to
//!   `#anchor` must name a heading of its own file;
//! * a mention of the design notes that live outside the tree (their file
//!   names, or their section sign), which a reader of the tree cannot open;
//! * an issue number (the word issue followed by a number, or a `#` and a
//!   number in a comment): the tracker is not part of the tree, so the text
//!   must say what it means.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

use crate::Step;

/// File kinds that are scanned.
const SCANNED: &[&str] = &["rs", "md", "js", "mjs", "html", "toml", "sh", "cu", "cpp", "h", "py", "ts"];
/// Extensions that make a token a cited file.
const CITABLE: &[&str] = &["rs", "md", "js", "mjs", "html", "toml", "sh", "cu", "cpp"];
/// Folders never scanned (anywhere in the tree).
const SKIPPED_DIRS: &[&str] = &["target", "node_modules", ".git"];
/// Paths (from the root) never scanned: build outputs and third-party
/// sources kept as published (their own notes are not ours to keep).
const SKIPPED_PATHS: &[&str] =
    &["www/pkg", "www/pkg-threads", ".device", "embedded/target", "vendor/gemm-f64/src"];
/// Cited paths that are build outputs (they exist after a build, not in a
/// clone); a citation starting with one of these is not checked.
const GENERATED: &[&str] = &["www/pkg/", "www/pkg-threads/", "pkg/", ".device/", "target/", "out/"];
/// Files the device check writes (under its output folder).
const GENERATED_NAMES: &[&str] = &["timing.md", "timing_drivers.md"];
/// First components of paths into other crates' sources (Rust's own
/// library, dependencies): not part of the tree, not checked. So is a path
/// whose first component is a versioned crate folder (`faer-0.24.4/…`).
const EXTERNAL: &[&str] =
    &["alloc", "std", "faer", "faer-traits", "gemm", "gemm-common", "dyn-stack", "pulp", "cudarc"];
/// A markdown file holding this line cites paths of other crates' sources
/// throughout (it says which in its text): its paths are not checked.
const EXTERNAL_PATHS: &str = "<!-- citations: the paths in this file are other crates' sources -->";

/// Names of the notes outside the tree, assembled so that this file does
/// not match itself.
fn outside_notes() -> [String; 4] {
    [
        format!("{}-{}", "AD", "RULES"),
        format!("{}.md", "SPEC"),
        format!("{}.md", "DESIGN"),
        format!("{} §", "SPEC"),
    ]
}

/// One offence.
struct Offence {
    file: String,
    line: usize,
    what: String,
}

pub fn check() -> Step {
    let root = crate::repo_root();
    let mut files = Vec::new();
    walk(&root, &root, &mut files);
    files.sort();
    let mut offences = Vec::new();
    let mut headings_cache: BTreeMap<PathBuf, Option<BTreeSet<String>>> = BTreeMap::new();
    // Every file of the tree, for citations by a path's tail (`lib.rs`,
    // `kernels/svd.rs`) from a file outside that folder.
    let mut all = Vec::new();
    walk_all(&root, &root, &mut all);
    let tree = Tree { root: root.clone(), files: all };
    for file in &files {
        let Ok(text) = fs::read_to_string(file) else { continue };
        let rel = file.strip_prefix(&root).unwrap_or(file).to_string_lossy().replace('\\', "/");
        check_file(&tree, file, &rel, &text, &mut headings_cache, &mut offences);
    }
    offences.dedup_by(|a, b| a.file == b.file && a.line == b.line && a.what == b.what);
    if offences.is_empty() {
        eprintln!("citations: {} files scanned, every citation resolves", files.len());
        return Ok(());
    }
    for o in &offences {
        eprintln!("{}:{}: {}", o.file, o.line, o.what);
    }
    Err(format!("citations: {} offences in {} files scanned", offences.len(), files.len()))
}

fn walk(root: &Path, dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        let rel = path.strip_prefix(root).unwrap_or(&path).to_string_lossy().replace('\\', "/");
        let Ok(kind) = entry.file_type() else { continue };
        if kind.is_dir() {
            if SKIPPED_DIRS.contains(&name.as_str()) || SKIPPED_PATHS.contains(&rel.as_str()) {
                continue;
            }
            walk(root, &path, out);
        } else if kind.is_file() {
            let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
            if SCANNED.contains(&ext) {
                out.push(path);
            }
        }
    }
}

/// The repository: its root and every file in it, as `/`-separated paths
/// from the root.
struct Tree {
    root: PathBuf,
    files: Vec<String>,
}

/// Every file under `dir` but the skipped folders.
fn walk_all(root: &Path, dir: &Path, out: &mut Vec<String>) {
    let Ok(entries) = fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        let rel = path.strip_prefix(root).unwrap_or(&path).to_string_lossy().replace('\\', "/");
        match entry.file_type() {
            Ok(t) if t.is_dir() && !SKIPPED_DIRS.contains(&name.as_str()) => walk_all(root, &path, out),
            Ok(t) if t.is_file() => out.push(rel),
            _ => {}
        }
    }
}

fn check_file(
    tree: &Tree,
    file: &Path,
    rel: &str,
    text: &str,
    headings: &mut BTreeMap<PathBuf, Option<BTreeSet<String>>>,
    offences: &mut Vec<Offence>,
) {
    let root = tree.root.as_path();
    let ext = file.extension().and_then(|e| e.to_str()).unwrap_or("");
    let dir = file.parent().unwrap_or(root);
    let notes = outside_notes();
    let external_paths = ext == "md" && text.lines().any(|l| l.trim() == EXTERNAL_PATHS);
    let mut fenced = false;
    for (i, line) in text.lines().enumerate() {
        let mut report = |what: String| offences.push(Offence { file: rel.to_string(), line: i + 1, what });
        for note in &notes {
            if line.contains(note.as_str()) {
                report(format!(
                    "cites `{note}`, which is not part of the tree: cite the in-tree doc section"
                ));
            }
        }
        if let Some(n) = issue_number(line, ext, fenced) {
            report(format!("names an issue number (`{n}`): say what it means instead"));
        }
        if ext == "md" && line.trim_start().starts_with("```") {
            fenced = !fenced;
        }
        // In code, only comments cite (a string literal names a file the
        // code makes or serves, not a document).
        let prose = match ext {
            "rs" | "js" | "mjs" => line.find("//").map(|c| &line[c..]),
            "sh" | "toml" => line.find('#').map(|c| &line[c..]),
            _ if external_paths => None,
            _ => Some(line),
        };
        for (path, anchor) in prose.map(cited_paths).unwrap_or_default() {
            let first = path.split('/').next().unwrap_or("");
            if GENERATED.iter().any(|g| path.starts_with(g))
                || notes.iter().any(|n| path.contains(n.as_str()))
                || GENERATED_NAMES.contains(&path.rsplit('/').next().unwrap_or(""))
                || path.contains('/') && EXTERNAL.contains(&first)
            {
                continue;
            }
            match resolve(tree, dir, &path) {
                None => report(format!("cites `{path}`, which does not exist")),
                Some(target) => {
                    if let Some(anchor) = anchor {
                        if !has_heading(&target, &anchor, headings) {
                            report(format!("cites `{path}#{anchor}`: {path} has no such heading"));
                        }
                    }
                }
            }
        }
        if ext == "md" && !fenced {
            for anchor in local_anchors(line) {
                if !has_heading(file, &anchor, headings) {
                    report(format!("links to `#{anchor}`: this file has no such heading"));
                }
            }
        }
    }
}

/// Characters a cited path is made of.
fn path_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/')
}

/// The paths cited on a line, with their `#anchor` when present: tokens
/// ending in a citable extension. URLs and module paths (`a::b`) are not
/// tokens of this form; placeholders (`<op>.rs`, `*.rs`) have no stem.
fn cited_paths(line: &str) -> Vec<(String, Option<String>)> {
    let chars: Vec<char> = line.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        if !path_char(chars[i]) {
            i += 1;
            continue;
        }
        let start = i;
        while i < chars.len() && path_char(chars[i]) {
            i += 1;
        }
        let token: String = chars[start..i].iter().collect();
        // Part of a URL or of a longer word (`http://…/x.md`, `$VAR/x.rs`).
        let before = if start > 0 { chars[start - 1] } else { ' ' };
        let url = token.starts_with('/')
            || token.starts_with("path/to/")
            || matches!(before, ':' | '$' | '*' | '>' | '}' | '@' | '~' | '%' | '=')
            || token.starts_with("self.");
        let token = token.trim_end_matches(['.', '-', '/']).trim_start_matches("./").to_string();
        let Some((stem, ext)) = token.rsplit_once('.') else { continue };
        if url || stem.is_empty() || stem.ends_with('/') || !CITABLE.contains(&ext) {
            continue;
        }
        // A path whose first component is a domain name is a URL.
        if stem.split('/').next().is_some_and(|first| first.contains('.') && token.contains('/')) {
            continue;
        }
        let mut anchor = None;
        if ext == "md" && i < chars.len() && chars[i] == '#' {
            let a_start = i + 1;
            let mut j = a_start;
            while j < chars.len() && (chars[j].is_alphanumeric() || matches!(chars[j], '-' | '_')) {
                j += 1;
            }
            if j > a_start {
                anchor = Some(chars[a_start..j].iter().collect());
            }
            i = j;
        }
        out.push((token, anchor));
    }
    out
}

/// `](#anchor)` links of a markdown line.
fn local_anchors(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = line;
    while let Some(at) = rest.find("](#") {
        let tail = &rest[at + 3..];
        let end = tail.find(')').unwrap_or(tail.len());
        out.push(tail[..end].to_string());
        rest = &tail[end..];
    }
    out
}

/// The file a citation names: from the root, from the citing file's folder
/// or from any folder above it.
fn resolve(tree: &Tree, dir: &Path, path: &str) -> Option<PathBuf> {
    let root = tree.root.as_path();
    let direct = root.join(path);
    if direct.exists() {
        return Some(direct);
    }
    let mut at = Some(dir);
    while let Some(d) = at {
        let candidate = d.join(path);
        if candidate.exists() {
            return Some(candidate);
        }
        if d == root {
            break;
        }
        at = d.parent();
    }
    // A path's tail: `lib.rs`, `kernels/svd.rs` (not for paths that start
    // at a top-level folder of the tree, which must be exact).
    let top_level = root.join(path.split('/').next().unwrap_or("")).exists() && path.contains('/');
    if top_level || path.starts_with("../") {
        return None;
    }
    let tail = format!("/{path}");
    tree.files.iter().find(|f| f.ends_with(&tail) || *f == path).map(|f| root.join(f))
}

/// GitHub's anchor of a heading: lower case, punctuation dropped (letters,
/// digits, `-`, `_` and spaces kept), spaces as `-`.
pub fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | ' '))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

fn has_heading(file: &Path, anchor: &str, cache: &mut BTreeMap<PathBuf, Option<BTreeSet<String>>>) -> bool {
    let slugs = cache.entry(file.to_path_buf()).or_insert_with(|| {
        let text = fs::read_to_string(file).ok()?;
        let mut slugs = BTreeSet::new();
        let mut fenced = false;
        for line in text.lines() {
            if line.trim_start().starts_with("```") {
                fenced = !fenced;
            }
            if fenced {
                continue;
            }
            if let Some(h) = line.strip_prefix('#') {
                let h = h.trim_start_matches('#');
                if h.starts_with(' ') {
                    let base = slug(h);
                    // Repeated headings get -1, -2, … as on GitHub.
                    let mut name = base.clone();
                    let mut n = 0;
                    while slugs.contains(&name) {
                        n += 1;
                        name = format!("{base}-{n}");
                    }
                    slugs.insert(name);
                }
            }
            // Explicit anchors: <a id="…"> / <a name="…">.
            for key in ["<a id=\"", "<a name=\""] {
                if let Some(at) = line.find(key) {
                    let tail = &line[at + key.len()..];
                    slugs.insert(tail[..tail.find('"').unwrap_or(tail.len())].to_string());
                }
            }
        }
        Some(slugs)
    });
    slugs.as_ref().is_some_and(|s| s.contains(anchor))
}

/// An issue number on the line: the word issue (or issues) followed by a
/// number, with or without `#`, anywhere; a bare `#` and a number in a
/// comment (or in markdown prose outside code blocks). Colours (`#1e1e1e`)
/// and `#[attr]` are not numbers.
fn issue_number(line: &str, ext: &str, fenced: bool) -> Option<String> {
    let lower = line.to_ascii_lowercase();
    let mut from = 0;
    while let Some(at) = lower[from..].find("issue") {
        let start = from + at;
        from = start + 5;
        if lower[..start].ends_with(|c: char| c.is_alphanumeric()) {
            continue;
        }
        let mut end = start + 5;
        if lower[end..].starts_with('s') {
            end += 1;
        }
        let spaces = lower[end..].len() - lower[end..].trim_start_matches(' ').len();
        end += spaces;
        if lower[end..].starts_with('#') {
            end += 1;
        } else if spaces == 0 {
            continue;
        }
        let digits = lower[end..].bytes().take_while(u8::is_ascii_digit).count();
        if digits > 0 {
            return Some(line[start..end + digits].to_string());
        }
    }
    let comment = match ext {
        "rs" | "js" | "mjs" => line.find("//").map(|c| &line[c..]),
        "sh" | "toml" => line.find('#').map(|c| &line[c + 1..]),
        "md" if !fenced => Some(line),
        _ => None,
    }?;
    let bytes = comment.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        if b != b'#' || (i > 0 && (bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'&')) {
            continue;
        }
        let digits = bytes[i + 1..].iter().take_while(|c| c.is_ascii_digit()).count();
        let after = bytes.get(i + 1 + digits);
        if digits > 0 && !after.is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_') {
            return Some(String::from_utf8_lossy(&bytes[i..i + 1 + digits]).into_owned());
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_paths_and_anchors() {
        let found = cited_paths("see `docs/ad-rules.md#svd` and host-cpu/src/lib.rs, not https://x.org/a.md");
        assert_eq!(
            found,
            [
                ("docs/ad-rules.md".to_string(), Some("svd".to_string())),
                ("host-cpu/src/lib.rs".to_string(), None)
            ]
        );
        assert!(cited_paths("ad/rules/<rule>.rs and *.rs and crate::ad::rules").is_empty());
    }

    #[test]
    fn finds_issue_numbers() {
        // Assembled, so that this file does not cite an issue itself.
        let word = "issue";
        let (a, b, c) = (
            format!("// fixed in {word} 29"),
            format!("see I{} #12", &word[1..]),
            format!("// see {}12 for why", '#'),
        );
        assert_eq!(issue_number(&a, "rs", false), Some(format!("{word} 29")));
        assert_eq!(issue_number(&b, "md", false), Some(format!("I{} #12", &word[1..])));
        assert_eq!(issue_number(&c, "rs", false), Some(format!("{}12", '#')));
        assert_eq!(issue_number("color: #1e1e1e; // #fff", "js", false), None);
        assert_eq!(issue_number("#[derive(Debug)] // no issue here", "rs", false), None);
        assert_eq!(issue_number("let x = a[#1];", "rs", false), None);
    }

    #[test]
    fn slugs_like_github() {
        assert_eq!(slug(" CUDA (`lindiff-cuda`)"), "cuda-lindiff-cuda");
        assert_eq!(slug("The SVD: gauges & ties"), "the-svd-gauges--ties");
    }
}
