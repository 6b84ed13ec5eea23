//! The architecture holds: every module of `src/` sits on one layer of the
//! README's list, imports only from its own layer or lower ones, and no
//! files import each other in a circle.
//!
//! The imports are read from the source as text: every `crate::name` and,
//! inside a folder, every `super::name` outside comments and test modules.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// The layers of the README's architecture section, lowest first.
const LAYERS: &[&[&str]] = &[
    &[
        "square",
        "bitboard",
        "remoteness",
        "text",
        "files",
        "cleanup",
        "stop",
        "system",
    ],
    &["board", "rules"],
    &["position", "index", "tight", "symmetry", "orbits", "error"],
    &["variant", "mod3"],
    &["solver"],
    &["checkpoint", "storage"],
    &["pipeline", "report", "estimate"],
    &["tablebase", "check"],
    &["server", "cli"],
];

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Every `.rs` file under `dir`, as paths relative to `src/`.
fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path.strip_prefix(src()).unwrap().to_owned());
        }
    }
}

/// The code of a file without comments and without its test module.
fn code(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("#[cfg(test)]") {
            // Test modules sit at the bottom of each file.
            break;
        }
        if trimmed.starts_with("//") {
            continue;
        }
        out.push_str(line.split(" //").next().unwrap());
        out.push('\n');
    }
    out
}

/// The identifiers that follow `prefix` in `code` (`crate::` or `super::`),
/// also inside braces: `crate::{a, b::c}` gives `a` and `b`.
fn names_after(code: &str, prefix: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for (at, _) in code.match_indices(prefix) {
        let before = code[..at].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
            continue;
        }
        let rest = &code[at + prefix.len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let inner = &group[..group.find('}').unwrap_or(group.len())];
            for piece in inner.split(',') {
                let name: String = piece
                    .trim()
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                if !name.is_empty() {
                    names.insert(name);
                }
            }
        } else {
            let name: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
            if !name.is_empty() {
                names.insert(name);
            }
        }
    }
    names
}

/// The top-level module a file belongs to: `solver` for `solver/kernel.rs`.
fn module_of(file: &Path) -> String {
    let first = file
        .components()
        .next()
        .unwrap()
        .as_os_str()
        .to_string_lossy()
        .into_owned();
    first.trim_end_matches(".rs").to_owned()
}

/// The file a `super::name` in `file` refers to: the sibling `name.rs` or
/// `name/mod.rs` when there is one, else the folder's `mod.rs`.
fn sibling(file: &Path, name: &str, files: &BTreeSet<PathBuf>) -> PathBuf {
    let dir = file.parent().unwrap();
    for candidate in [dir.join(format!("{name}.rs")), dir.join(name).join("mod.rs")] {
        if files.contains(&candidate) {
            return candidate;
        }
    }
    dir.join("mod.rs")
}

/// The file a `crate::name` refers to: `name.rs` or `name/mod.rs`, else
/// `lib.rs`, whose re-exports sit above every module.
fn top_file(name: &str, files: &BTreeSet<PathBuf>) -> PathBuf {
    [PathBuf::from(format!("{name}.rs")), Path::new(name).join("mod.rs")]
        .into_iter()
        .find(|f| files.contains(f))
        .unwrap_or_else(|| PathBuf::from("lib.rs"))
}

/// Which file imports which, among the files of `src/`.
fn imports() -> BTreeMap<PathBuf, BTreeSet<PathBuf>> {
    let mut list = Vec::new();
    sources(&src(), &mut list);
    let files: BTreeSet<PathBuf> = list.into_iter().collect();
    let mut graph = BTreeMap::new();
    for file in &files {
        let text = code(&fs::read_to_string(src().join(file)).unwrap());
        let mut to = BTreeSet::new();
        for name in names_after(&text, "crate::") {
            to.insert(top_file(&name, &files));
        }
        if file.parent().is_some_and(|p| !p.as_os_str().is_empty()) && !file.ends_with("mod.rs") {
            for name in names_after(&text, "super::") {
                to.insert(sibling(file, &name, &files));
            }
        }
        if file.ends_with("mod.rs") {
            // `pub use child::Item` in a folder's root.
            let dir = file.parent().unwrap();
            for line in text.lines().filter(|l| l.trim_start().starts_with("pub use ")) {
                let name: String = line
                    .trim_start()
                    .trim_start_matches("pub use ")
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                let child = dir.join(format!("{name}.rs"));
                if files.contains(&child) {
                    to.insert(child);
                }
            }
        }
        to.remove(file);
        graph.insert(file.clone(), to);
    }
    graph
}

fn layer(module: &str) -> Option<usize> {
    LAYERS.iter().position(|l| l.contains(&module))
}

#[test]
fn every_module_sits_on_a_layer() {
    let graph = imports();
    for file in graph.keys() {
        let module = module_of(file);
        if ["lib", "main"].contains(&module.as_str()) {
            continue;
        }
        assert!(
            layer(&module).is_some(),
            "src/{} is on no layer: add `{module}` to the README's architecture and to LAYERS",
            file.display()
        );
    }
}

/// The imports in `graph` that run from a file up to a higher layer.
fn upward(graph: &BTreeMap<PathBuf, BTreeSet<PathBuf>>) -> Vec<String> {
    let mut wrong = Vec::new();
    for (file, to) in graph {
        let Some(here) = layer(&module_of(file)) else {
            continue;
        };
        for target in to {
            match layer(&module_of(target)) {
                Some(there) if there <= here => {}
                _ => wrong.push(format!("src/{} imports src/{}", file.display(), target.display())),
            }
        }
    }
    wrong
}

/// A circle of files in `graph`, if there is one, its first file repeated
/// at the end.
fn circle(graph: &BTreeMap<PathBuf, BTreeSet<PathBuf>>) -> Option<Vec<PathBuf>> {
    // Depth-first: a file met again while still on the path closes a circle.
    fn visit(
        file: &PathBuf,
        graph: &BTreeMap<PathBuf, BTreeSet<PathBuf>>,
        path: &mut Vec<PathBuf>,
        done: &mut BTreeSet<PathBuf>,
    ) -> Option<Vec<PathBuf>> {
        if let Some(at) = path.iter().position(|f| f == file) {
            let mut circle = path[at..].to_vec();
            circle.push(file.clone());
            return Some(circle);
        }
        if !done.insert(file.clone()) {
            return None;
        }
        path.push(file.clone());
        for next in graph.get(file).into_iter().flatten() {
            if let Some(circle) = visit(next, graph, path, done) {
                return Some(circle);
            }
        }
        path.pop();
        None
    }
    let mut done = BTreeSet::new();
    graph
        .keys()
        .find_map(|file| visit(file, graph, &mut Vec::new(), &mut done))
}

#[test]
fn no_module_imports_one_above_it() {
    let wrong = upward(&imports());
    assert!(wrong.is_empty(), "imports that run up a layer:\n{}", wrong.join("\n"));
}

#[test]
fn no_files_import_each_other_in_a_circle() {
    if let Some(circle) = circle(&imports()) {
        let names: Vec<String> = circle.iter().map(|f| format!("src/{}", f.display())).collect();
        panic!("files import each other in a circle: {}", names.join(" -> "));
    }
}

/// The checks above can fail: imports are read through braces and past
/// comments, and a made-up circle and upward import are found.
#[test]
fn the_checks_see_what_they_look_for() {
    let files = BTreeSet::from([PathBuf::from("board.rs"), PathBuf::from("solver/mod.rs")]);
    assert_eq!(top_file("solver", &files), Path::new("solver/mod.rs"));
    assert_eq!(top_file("Error", &files), Path::new("lib.rs"));
    let text = code("use crate::{board::Geometry, index};\nlet x = crate::rules::safe(); // crate::cli\n");
    assert_eq!(
        names_after(&text, "crate::"),
        ["board", "index", "rules"].map(String::from).into()
    );
    assert_eq!(
        code("use a;\n// crate::cli\n#[cfg(test)]\nmod tests { use crate::cli; }"),
        "use a;\n"
    );
    let edge = |a: &str, b: &str| (PathBuf::from(a), BTreeSet::from([PathBuf::from(b)]));
    let bad = BTreeMap::from([
        edge("solver/exact.rs", "solver/twobit.rs"),
        edge("solver/twobit.rs", "solver/exact.rs"),
        edge("error.rs", "tablebase.rs"),
    ]);
    assert_eq!(upward(&bad), ["src/error.rs imports src/tablebase.rs"]);
    assert_eq!(circle(&bad).map(|c| c.len()), Some(3));
    assert!(circle(&BTreeMap::from([edge("a.rs", "b.rs")])).is_none());
}
