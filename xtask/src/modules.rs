//! `cargo xtask modules`: no import cycles between the top-level modules of
//! a crate.
//!
//! For each crate of the tree (each folder with a `Cargo.toml` and a
//! `src/`), the top-level modules are the files and folders directly under
//! `src/` (`src/<name>.rs`, `src/<name>/mod.rs` and everything below them are module
//! `a`; `lib.rs`/`main.rs` are the crate root, not a module). Module `a`
//! depends on `b` when a file of `a` names `crate::b` (in a `use`, a path
//! or a `crate::{b::…}` group) or reaches `b` through `super::` from its
//! top level. Comments are ignored, and so are `#[cfg(test)]` blocks (tests
//! may reach anywhere). A cycle among the top-level modules fails the
//! check; each is printed with one import per edge as `file:line`.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

use crate::Step;

/// One import: where it is.
type Site = (String, usize);
/// `from → to → the first import that makes the edge`.
type Graph = BTreeMap<String, BTreeMap<String, Site>>;

pub fn check() -> Step {
    let root = crate::repo_root();
    let mut crates = Vec::new();
    find_crates(&root, &root, &mut crates);
    crates.sort();
    let mut failures = Vec::new();
    for krate in &crates {
        let graph = graph_of(&root, krate);
        let cycles = cycles(&graph);
        let name = krate.strip_prefix(&root).unwrap_or(krate).display().to_string();
        let name = if name.is_empty() { ".".to_string() } else { name };
        if cycles.is_empty() {
            eprintln!("modules: {name}: {} top-level modules, no cycle", graph.len());
            continue;
        }
        for (component, cycle) in cycles {
            let mut text = format!("modules: {name}: cycle {}", cycle.join(" → "));
            text.push_str(&format!(" → {}", cycle[0]));
            for (i, from) in cycle.iter().enumerate() {
                let to = &cycle[(i + 1) % cycle.len()];
                let (file, line) = &graph[from][to];
                text.push_str(&format!("\n    {from} → {to}: {file}:{line}"));
            }
            if component.len() > cycle.len() {
                text.push_str(&format!("\n    component: {}", component.join(", ")));
            }
            eprintln!("{text}");
            failures.push(name.clone());
        }
    }
    if failures.is_empty() {
        Ok(())
    } else {
        Err(format!("modules: {} import cycles between top-level modules (above)", failures.len()))
    }
}

fn find_crates(root: &Path, dir: &Path, out: &mut Vec<PathBuf>) {
    if dir.join("Cargo.toml").is_file() && dir.join("src").is_dir() {
        out.push(dir.to_path_buf());
    }
    let Ok(entries) = fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let path = entry.path();
        let rel = path.strip_prefix(root).unwrap_or(&path).to_string_lossy().replace('\\', "/");
        if entry.file_type().is_ok_and(|t| t.is_dir())
            && !name.starts_with('.')
            && !matches!(name.as_str(), "target" | "node_modules" | "src" | "tests" | "examples" | "benches")
            && !rel.starts_with("vendor")
            && !rel.starts_with("www")
        {
            find_crates(root, &path, out);
        }
    }
    // The tests crate is itself a crate with a src/ (its folder is `tests`).
    if dir == root && root.join("tests/Cargo.toml").is_file() && !out.iter().any(|c| c.ends_with("tests")) {
        out.push(root.join("tests"));
    }
}

/// The top-level module graph of one crate.
fn graph_of(root: &Path, krate: &Path) -> Graph {
    let src = krate.join("src");
    let mut files = Vec::new();
    rs_files(&src, &mut files);
    files.sort();
    let mut graph = Graph::new();
    for file in &files {
        let rel = file.strip_prefix(&src).unwrap_or(file);
        let parts: Vec<String> = rel.iter().map(|p| p.to_string_lossy().into_owned()).collect();
        // The module path of the file: src/<a>/<b>.rs → [a, b]; src/<a>/mod.rs → [a].
        let mut path: Vec<String> = parts.clone();
        let last = path.pop().unwrap_or_default();
        let stem = last.trim_end_matches(".rs");
        if stem != "mod" && !(path.is_empty() && (stem == "lib" || stem == "main")) {
            path.push(stem.to_string());
        }
        let Some(top) = path.first().cloned() else { continue }; // the crate root
        graph.entry(top.clone()).or_default();
        let Ok(text) = fs::read_to_string(file) else { continue };
        let shown = file.strip_prefix(root).unwrap_or(file).display().to_string();
        for (line_no, target) in imports(&text, &path) {
            if target != top {
                graph.entry(top.clone()).or_default().entry(target).or_insert((shown.clone(), line_no));
            }
        }
    }
    // Only edges to modules of this crate (not `crate::SomeType` re-exports
    // from the root).
    let modules: BTreeSet<String> = graph.keys().cloned().collect();
    for edges in graph.values_mut() {
        edges.retain(|to, _| modules.contains(to));
    }
    graph
}

fn rs_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        if entry.file_type().is_ok_and(|t| t.is_dir()) {
            rs_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// `(line, top-level module)` for each import of another top-level module
/// in a file whose module path is `path`.
fn imports(text: &str, path: &[String]) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    // Inline `mod x {` blocks add a level for `super::`; `#[cfg(test)]`
    // blocks are skipped.
    let mut depth: i64 = 0;
    let mut inline_mods: Vec<i64> = Vec::new();
    let mut skip_until: Option<i64> = None;
    let mut cfg_test_pending = false;
    for (i, raw) in text.lines().enumerate() {
        let line = strip_comment(raw);
        let trimmed = line.trim();
        if trimmed.starts_with("#[cfg(test)]") {
            cfg_test_pending = true;
        }
        let opens = line.matches('{').count() as i64;
        let closes = line.matches('}').count() as i64;
        if skip_until.is_none() && cfg_test_pending && opens > 0 && !trimmed.starts_with("#[") {
            skip_until = Some(depth);
            cfg_test_pending = false;
        } else if skip_until.is_none() && cfg_test_pending && trimmed.ends_with(';') {
            cfg_test_pending = false;
        }
        if skip_until.is_none() {
            let inline = inline_mods.len();
            for target in line_imports(line, path, inline) {
                out.push((i + 1, target));
            }
            if let Some(rest) = trimmed.strip_prefix("pub ").or(Some(trimmed)) {
                let rest = rest.strip_prefix("pub(crate) ").unwrap_or(rest);
                if rest.starts_with("mod ") && rest.ends_with('{') {
                    inline_mods.push(depth);
                }
            }
        }
        depth += opens - closes;
        while inline_mods.last().is_some_and(|&d| depth <= d) {
            inline_mods.pop();
        }
        if skip_until.is_some_and(|d| depth <= d) {
            skip_until = None;
        }
    }
    out
}

/// The line without a `//` comment (string contents are kept; a `//` inside
/// a string ends the line early, which only loses imports after it).
fn strip_comment(line: &str) -> &str {
    match line.find("//") {
        Some(at) => &line[..at],
        None => line,
    }
}

fn ident_at(s: &str) -> String {
    s.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect()
}

/// The top-level modules one line names, for a file at module `path`
/// inside `inline` levels of inline modules.
fn line_imports(line: &str, path: &[String], inline: usize) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = line;
    while let Some(at) = rest.find("crate::") {
        let before = &rest[..at];
        let tail = &rest[at + 7..];
        rest = tail;
        if before.ends_with(|c: char| c.is_alphanumeric() || c == '_' || c == '$') {
            continue; // `$crate::`, `lindiff_crate::`
        }
        if let Some(group) = tail.strip_prefix('{') {
            // crate::{a::x, b::{y, z}}: the first segment of each top-level entry.
            let mut level = 0;
            let mut start = true;
            for (at, c) in group.char_indices() {
                match c {
                    '{' => level += 1,
                    '}' if level == 0 => break,
                    '}' => level -= 1,
                    ',' if level == 0 => start = true,
                    c if start && level == 0 && (c.is_alphanumeric() || c == '_') => {
                        start = false;
                        out.push(ident_at(&group[at..]));
                    }
                    _ if level == 0 && !c.is_whitespace() => start = false,
                    _ => {}
                }
            }
            continue;
        }
        let name = ident_at(tail);
        if !name.is_empty() {
            out.push(name);
        }
    }
    // super::: count the leading `super::`s of each path.
    let mut rest = line;
    while let Some(at) = rest.find("super::") {
        let before = &rest[..at];
        if before.ends_with(|c: char| c.is_alphanumeric() || c == '_' || c == ':') {
            rest = &rest[at + 7..];
            continue;
        }
        let mut tail = &rest[at..];
        let mut ups = 0;
        while let Some(t) = tail.strip_prefix("super::") {
            ups += 1;
            tail = t;
        }
        rest = tail;
        // The module this path starts from, after climbing out of inline
        // modules and then file modules.
        let file_ups = ups as i64 - inline as i64;
        if file_ups <= 0 {
            continue; // stays inside this file
        }
        let remaining = path.len() as i64 - file_ups;
        if remaining > 0 {
            out.push(path[0].clone()); // still inside the same top-level module
        } else if remaining == 0 {
            let name = ident_at(tail);
            if !name.is_empty() {
                out.push(name);
            }
        }
    }
    out.retain(|n| n != "self" && n != "super" && !n.is_empty());
    out
}

/// Every elementary cycle would be too many to print: one cycle per
/// strongly connected component (of two or more modules), found by a
/// breadth-first search back to its start.
/// `(component, one cycle through it)`, the component's modules sorted.
fn cycles(graph: &Graph) -> Vec<(Vec<String>, Vec<String>)> {
    let nodes: Vec<&String> = graph.keys().collect();
    let index: BTreeMap<&String, usize> = nodes.iter().enumerate().map(|(i, n)| (*n, i)).collect();
    let n = nodes.len();
    let adj: Vec<Vec<usize>> =
        nodes.iter().map(|v| graph[*v].keys().filter_map(|t| index.get(t).copied()).collect()).collect();
    let reach = |from: usize| {
        let mut seen = vec![false; n];
        let mut stack = vec![from];
        while let Some(v) = stack.pop() {
            for &w in &adj[v] {
                if !seen[w] {
                    seen[w] = true;
                    stack.push(w);
                }
            }
        }
        seen
    };
    let reaches: Vec<Vec<bool>> = (0..n).map(reach).collect();
    let mut done = vec![false; n];
    let mut out = Vec::new();
    for v in 0..n {
        if done[v] || !reaches[v][v] {
            continue;
        }
        let component: Vec<usize> = (0..n).filter(|&w| reaches[v][w] && reaches[w][v]).collect();
        for &w in &component {
            done[w] = true;
        }
        // Shortest path v → … → v.
        let mut parent = vec![usize::MAX; n];
        let mut queue = std::collections::VecDeque::from([v]);
        let mut found = None;
        while let Some(x) = queue.pop_front() {
            for &y in &adj[x] {
                if y == v {
                    found = Some(x);
                    break;
                }
                if parent[y] == usize::MAX && y != v {
                    parent[y] = x;
                    queue.push_back(y);
                }
            }
            if found.is_some() {
                break;
            }
        }
        let mut cycle = Vec::new();
        let mut at = found.unwrap_or(v);
        while at != v {
            cycle.push(nodes[at].clone());
            at = parent[at];
        }
        cycle.push(nodes[v].clone());
        cycle.reverse();
        let mut names: Vec<String> = component.iter().map(|&w| nodes[w].clone()).collect();
        names.sort();
        out.push((names, cycle));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(p: &[&str]) -> Vec<String> {
        p.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn reads_imports() {
        assert_eq!(line_imports("use crate::op::{Svd, Qr};", &path(&["ad"]), 0), ["op"]);
        assert_eq!(
            line_imports("use crate::{op::Svd, prim::{A, B}, Error};", &path(&["ad"]), 0),
            ["op", "prim", "Error"]
        );
        assert_eq!(line_imports("use super::cx::Cx;", &path(&["ad", "rules"]), 0), ["ad"]);
        assert_eq!(line_imports("use super::op::Op;", &path(&["ad"]), 0), ["op"]);
        assert!(line_imports("use super::*;", &path(&["ad"]), 1).is_empty());
        assert!(line_imports("$crate::op::x", &path(&["ad"]), 0).is_empty());
    }

    #[test]
    fn finds_a_cycle() {
        let mut g = Graph::new();
        let site = ("f.rs".to_string(), 1);
        g.entry("a".into()).or_default().insert("b".into(), site.clone());
        g.entry("b".into()).or_default().insert("c".into(), site.clone());
        g.entry("c".into()).or_default().insert("a".into(), site.clone());
        g.entry("d".into()).or_default().insert("a".into(), site);
        assert_eq!(cycles(&g), [(path(&["a", "b", "c"]), path(&["a", "b", "c"]))]);
    }
}
