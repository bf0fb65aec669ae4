//! The crate's modules depend on each other one way: no import cycle between
//! any two of its files, and no top-level module reaching up past its layer.
//!
//! Read from the source, not from the compiler: `use` lines and paths written
//! in code (`crate::a::b`, `super::x`, a child module's name) are resolved to
//! the file that defines what they name, through `pub use` re-exports (a
//! re-export is a door, not a dependency). Test modules are left out.
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The layers, lowest last: a module may use its own layer's and lower
/// layers' modules, never a higher one's.
const LAYERS: &[&[&str]] = &[
    &["cli"],
    &["commands"],
    &["options"],
    &["harness"],
    &["baseline", "retry", "named_sql"],
    &["render"],
    &["engine"],
    &["report"],
    &[
        "postgres",
        "specfile",
        "sql_lexer",
        "i18n",
        "files",
        "progress",
        "output",
    ],
];

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Ident(String),
    Path, // ::
    Open,
    Close,
    Semi,
    Hash,
    Bang,
    Star,
    Comma,
    LBracket,
    RBracket,
    Dollar,
    Other,
}

/// Rust source as tokens, without comments, strings and characters.
fn tokens(src: &str) -> Vec<Tok> {
    let b: Vec<char> = src.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_whitespace() {
            i += 1;
        } else if c == '/' && b.get(i + 1) == Some(&'/') {
            while i < b.len() && b[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && b.get(i + 1) == Some(&'*') {
            let mut depth = 0;
            while i < b.len() {
                if b[i] == '/' && b.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if b[i] == '*' && b.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if c == 'r' && (b.get(i + 1) == Some(&'#') || b.get(i + 1) == Some(&'"')) && !prev_ident(&b, i) {
            // A raw string: r"..." or r#"..."#.
            let mut j = i + 1;
            let mut hashes = 0;
            while b.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            if b.get(j) != Some(&'"') {
                out.push(Tok::Ident("r".into()));
                i += 1;
                continue;
            }
            j += 1;
            loop {
                if j >= b.len() {
                    break;
                }
                if b[j] == '"' && (0..hashes).all(|k| b.get(j + 1 + k) == Some(&'#')) {
                    j += 1 + hashes;
                    break;
                }
                j += 1;
            }
            i = j;
            out.push(Tok::Other);
        } else if c == '"' {
            i += 1;
            while i < b.len() && b[i] != '"' {
                if b[i] == '\\' {
                    i += 1;
                }
                i += 1;
            }
            i += 1;
            out.push(Tok::Other);
        } else if c == '\'' {
            // A character ('x', '\n', '\u{..}') or a lifetime ('a).
            if b.get(i + 1) == Some(&'\\') {
                i += 2;
                while i < b.len() && b[i] != '\'' {
                    i += 1;
                }
                i += 1;
            } else if b.get(i + 2) == Some(&'\'') {
                i += 3;
            } else {
                i += 1;
                while i < b.len() && (b[i].is_alphanumeric() || b[i] == '_') {
                    i += 1;
                }
            }
            out.push(Tok::Other);
        } else if c.is_alphabetic() || c == '_' {
            let start = i;
            while i < b.len() && (b[i].is_alphanumeric() || b[i] == '_') {
                i += 1;
            }
            let word: String = b[start..i].iter().collect();
            // b"..." and br"..." are strings.
            if (word == "b" || word == "br") && b.get(i) == Some(&'"') {
                continue;
            }
            out.push(Tok::Ident(word));
        } else if c == ':' && b.get(i + 1) == Some(&':') {
            out.push(Tok::Path);
            i += 2;
        } else {
            out.push(match c {
                '{' => Tok::Open,
                '}' => Tok::Close,
                ';' => Tok::Semi,
                '#' => Tok::Hash,
                '!' => Tok::Bang,
                '*' => Tok::Star,
                ',' => Tok::Comma,
                '[' => Tok::LBracket,
                '$' => Tok::Dollar,
                ']' => Tok::RBracket,
                _ => Tok::Other,
            });
            i += 1;
        }
    }
    out
}

fn prev_ident(b: &[char], i: usize) -> bool {
    i > 0 && (b[i - 1].is_alphanumeric() || b[i - 1] == '_')
}

/// A module's path from the crate root.
type ModPath = Vec<String>;

/// What one module (a file, or an inline module in it) says.
#[derive(Default, Debug)]
struct Module {
    file: String,
    /// Child modules, file or inline.
    children: BTreeSet<String>,
    /// `pub use` re-exports: the name it is known by here -> the absolute path.
    reexports: BTreeMap<String, ModPath>,
    /// Absolute paths this module's code names (use lines and paths in code).
    refs: Vec<ModPath>,
}

struct Crate {
    modules: BTreeMap<ModPath, Module>,
    /// `#[macro_export]` macros, at the crate root: name -> file.
    macros: BTreeMap<String, String>,
}

fn module_path_of(rel: &Path) -> ModPath {
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let last = parts.pop().unwrap();
    let stem = last.trim_end_matches(".rs").to_string();
    if stem != "mod" && stem != "lib" {
        parts.push(stem);
    }
    parts
}

fn rs_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir).unwrap().flatten().collect();
    entries.sort_by_key(|e| e.path());
    for e in entries {
        let p = e.path();
        if p.is_dir() {
            rs_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// A `use` tree from `toks[*i]` to its `;`, as paths (relative as written).
fn use_tree(toks: &[Tok], i: &mut usize, prefix: &[String], out: &mut Vec<(Vec<String>, Option<String>)>) {
    let mut path: Vec<String> = prefix.to_vec();
    loop {
        match toks.get(*i) {
            Some(Tok::Ident(w)) if w == "as" => {
                *i += 1;
                let alias = match toks.get(*i) {
                    Some(Tok::Ident(a)) => a.clone(),
                    _ => String::new(),
                };
                *i += 1;
                out.push((path.clone(), Some(alias)));
                return;
            }
            Some(Tok::Ident(w)) => {
                path.push(w.clone());
                *i += 1;
            }
            Some(Tok::Path) => *i += 1,
            Some(Tok::Star) => {
                path.push("*".into());
                *i += 1;
            }
            Some(Tok::Open) => {
                *i += 1;
                loop {
                    match toks.get(*i) {
                        Some(Tok::Close) => {
                            *i += 1;
                            return;
                        }
                        Some(Tok::Comma) => *i += 1,
                        None => return,
                        _ => use_tree(toks, i, &path, out),
                    }
                }
            }
            _ => {
                if path.len() > prefix.len() {
                    out.push((path, None));
                }
                return;
            }
        }
    }
}

/// Turns a path as written in module `at` into an absolute one (None for
/// other crates and the prelude).
fn absolute(at: &ModPath, path: &[String], children: &BTreeSet<String>) -> Option<ModPath> {
    let first = path.first()?;
    let mut base: ModPath = match first.as_str() {
        "crate" => Vec::new(),
        "self" => at.clone(),
        "super" => at[..at.len().saturating_sub(1)].to_vec(),
        w if children.contains(w) => {
            let mut p = at.clone();
            p.push(w.to_string());
            return Some(p.into_iter().chain(path[1..].iter().cloned()).collect());
        }
        _ => return None,
    };
    let mut rest = &path[1..];
    while rest.first().is_some_and(|w| w == "super") {
        base.pop();
        rest = &rest[1..];
    }
    base.extend(rest.iter().filter(|w| *w != "self").cloned());
    Some(base)
}

fn parse_crate(src: &Path) -> Crate {
    let mut files = Vec::new();
    rs_files(src, &mut files);
    let mut modules: BTreeMap<ModPath, Module> = BTreeMap::new();
    let mut macros = BTreeMap::new();
    // Child modules first: a path's first word may name one.
    let mut parsed = Vec::new();
    for f in &files {
        let rel = f.strip_prefix(src).unwrap();
        if rel == Path::new("main.rs") {
            continue;
        }
        let name = rel.to_string_lossy().into_owned();
        let toks = tokens(&std::fs::read_to_string(f).unwrap());
        parsed.push((module_path_of(rel), name, toks));
    }
    for (path, name, _) in &parsed {
        modules.entry(path.clone()).or_default().file = name.clone();
        if let Some((last, parent)) = path.split_last() {
            modules
                .entry(parent.to_vec())
                .or_default()
                .children
                .insert(last.clone());
        }
    }
    for (path, name, toks) in &parsed {
        scan(path, name, toks, &mut modules, &mut macros);
    }
    Crate { modules, macros }
}

/// Reads one file's tokens into its module (and its inline modules).
fn scan(
    file_mod: &ModPath,
    file: &str,
    toks: &[Tok],
    modules: &mut BTreeMap<ModPath, Module>,
    macros: &mut BTreeMap<String, String>,
) {
    // The inline modules we are in: (path, brace depth at which it closes).
    let mut stack: Vec<(ModPath, usize)> = vec![(file_mod.clone(), 0)];
    let mut depth = 0usize;
    let mut cfg_test = false;
    let mut macro_export = false;
    // Inside a macro_rules! body (closing at this depth): only `$crate::`
    // paths are the macro's own; the rest resolve where it is expanded.
    let mut in_macro: Option<usize> = None;
    let mut i = 0;
    while i < toks.len() {
        let at = stack.last().unwrap().0.clone();
        match &toks[i] {
            Tok::Open => {
                depth += 1;
                i += 1;
            }
            Tok::Close => {
                depth = depth.saturating_sub(1);
                if in_macro == Some(depth) {
                    in_macro = None;
                }
                if stack.len() > 1 && stack.last().unwrap().1 == depth {
                    stack.pop();
                }
                i += 1;
            }
            Tok::Hash => {
                // An attribute: #[cfg(test)] and #[macro_export] mark what follows.
                let mut j = i + 1;
                if toks.get(j) == Some(&Tok::Bang) {
                    j += 1;
                }
                let mut words = Vec::new();
                if toks.get(j) == Some(&Tok::LBracket) {
                    let mut d = 0;
                    while j < toks.len() {
                        match &toks[j] {
                            Tok::LBracket => d += 1,
                            Tok::RBracket => {
                                d -= 1;
                                if d == 0 {
                                    break;
                                }
                            }
                            Tok::Ident(w) => words.push(w.as_str()),
                            _ => {}
                        }
                        j += 1;
                    }
                }
                if words.starts_with(&["cfg", "test"]) {
                    cfg_test = true;
                }
                if words.first() == Some(&"macro_export") {
                    macro_export = true;
                }
                i = j + 1;
            }
            Tok::Ident(w) if w == "macro_rules" => {
                if let Some(Tok::Ident(name)) = toks.get(i + 2)
                    && macro_export
                {
                    macros.insert(name.clone(), file.to_string());
                }
                macro_export = false;
                if toks.get(i + 3) == Some(&Tok::Open) && in_macro.is_none() {
                    in_macro = Some(depth);
                    depth += 1;
                    i += 4;
                } else {
                    i += 1;
                }
            }
            Tok::Ident(w) if w == "mod" => {
                let name = match toks.get(i + 1) {
                    Some(Tok::Ident(n)) => n.clone(),
                    _ => {
                        i += 1;
                        continue;
                    }
                };
                if toks.get(i + 2) == Some(&Tok::Open) {
                    if cfg_test {
                        // Skip the test module whole.
                        let mut d = 0;
                        let mut j = i + 2;
                        while j < toks.len() {
                            match toks[j] {
                                Tok::Open => d += 1,
                                Tok::Close => {
                                    d -= 1;
                                    if d == 0 {
                                        break;
                                    }
                                }
                                _ => {}
                            }
                            j += 1;
                        }
                        i = j + 1;
                        cfg_test = false;
                        continue;
                    }
                    let mut p = at.clone();
                    p.push(name.clone());
                    modules.entry(at.clone()).or_default().children.insert(name);
                    modules.entry(p.clone()).or_default().file = file.to_string();
                    stack.push((p, depth));
                    depth += 1;
                    i += 3;
                    continue;
                }
                cfg_test = false;
                i += 2;
            }
            Tok::Ident(w) if w == "use" => {
                let public = i > 0
                    && (matches!(&toks[i - 1], Tok::Ident(p) if p == "pub")
                        || (matches!(&toks[i - 1], Tok::Other)
                            && matches!(toks.get(i.wrapping_sub(4)), Some(Tok::Ident(p)) if p == "pub")));
                i += 1;
                let mut tree = Vec::new();
                use_tree(toks, &mut i, &[], &mut tree);
                let children = modules.get(&at).map(|m| m.children.clone()).unwrap_or_default();
                for (path, alias) in tree.into_iter().filter(|_| !cfg_test) {
                    let Some(abs) = absolute(&at, &path, &children) else {
                        continue;
                    };
                    let m = modules.entry(at.clone()).or_default();
                    if public {
                        let name = alias.unwrap_or_else(|| path.last().cloned().unwrap_or_default());
                        if name == "*" {
                            m.reexports.insert(format!("*{}", abs.join("::")), abs);
                        } else {
                            m.reexports.insert(name, abs);
                        }
                    } else {
                        m.refs.push(abs);
                    }
                }
                cfg_test = false;
            }
            Tok::Ident(first) => {
                // A path in code: a::b::c.
                let mut path = vec![first.clone()];
                let mut j = i + 1;
                while toks.get(j) == Some(&Tok::Path) {
                    match toks.get(j + 1) {
                        Some(Tok::Ident(w)) => {
                            path.push(w.clone());
                            j += 2;
                        }
                        _ => break,
                    }
                }
                let own = in_macro.is_none() || (first == "crate" && i > 0 && toks[i - 1] == Tok::Dollar);
                if path.len() > 1 && own {
                    let children = modules.get(&at).map(|m| m.children.clone()).unwrap_or_default();
                    if let Some(abs) = absolute(&at, &path, &children) {
                        modules.entry(at.clone()).or_default().refs.push(abs);
                    }
                }
                if !matches!(first.as_str(), "pub" | "crate") {
                    cfg_test = false;
                }
                i = j.max(i + 1);
            }
            _ => i += 1,
        }
    }
}

impl Crate {
    /// The file defining what an absolute path names.
    fn resolve(&self, path: &[String], hops: usize) -> Option<String> {
        if hops > 16 {
            return None;
        }
        if path.len() == 1
            && let Some(f) = self.macros.get(&path[0])
        {
            return Some(f.clone());
        }
        // The longest prefix that is a module.
        let mut k = path.len();
        while k > 0 && !self.modules.contains_key(&path[..k]) {
            k -= 1;
        }
        let m = self.modules.get(&path[..k])?;
        if let Some(item) = path.get(k) {
            if let Some(target) = m.reexports.get(item) {
                let mut next = target.clone();
                next.extend(path[k + 1..].iter().cloned());
                return self.resolve(&next, hops + 1);
            }
            if k == 0
                && let Some(f) = self.macros.get(item)
            {
                return Some(f.clone());
            }
        }
        Some(m.file.clone())
    }

    /// File -> files it depends on.
    fn edges(&self) -> BTreeMap<String, BTreeSet<String>> {
        let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for m in self.modules.values() {
            let deps = out.entry(m.file.clone()).or_default();
            for r in &m.refs {
                if let Some(f) = self.resolve(r, 0)
                    && f != m.file
                {
                    deps.insert(f);
                }
            }
        }
        out
    }
}

/// Every cycle's files (strongly connected components of more than one file).
fn cycles(edges: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    // Tarjan's algorithm.
    struct T<'a> {
        edges: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on: BTreeSet<&'a str>,
        next: usize,
        out: Vec<Vec<String>>,
    }
    fn visit<'a>(t: &mut T<'a>, v: &'a str) {
        t.index.insert(v, t.next);
        t.low.insert(v, t.next);
        t.next += 1;
        t.stack.push(v);
        t.on.insert(v);
        if let Some(ws) = t.edges.get(v) {
            for w in ws {
                let w = w.as_str();
                if !t.index.contains_key(w) {
                    visit(t, w);
                    let l = t.low[w].min(t.low[v]);
                    t.low.insert(v, l);
                } else if t.on.contains(w) {
                    let l = t.index[w].min(t.low[v]);
                    t.low.insert(v, l);
                }
            }
        }
        if t.low[v] == t.index[v] {
            let mut comp = Vec::new();
            loop {
                let w = t.stack.pop().unwrap();
                t.on.remove(w);
                comp.push(w.to_string());
                if w == v {
                    break;
                }
            }
            if comp.len() > 1 {
                comp.sort();
                t.out.push(comp);
            }
        }
    }
    let mut t = T {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        next: 0,
        out: Vec::new(),
    };
    for v in edges.keys() {
        if !t.index.contains_key(v.as_str()) {
            visit(&mut t, v);
        }
    }
    t.out
}

fn top(file: &str) -> String {
    file.split(['/', '.']).next().unwrap_or("").to_string()
}

fn layer(top: &str) -> Option<usize> {
    LAYERS.iter().position(|l| l.contains(&top))
}

fn graph() -> BTreeMap<String, BTreeSet<String>> {
    parse_crate(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src")).edges()
}

#[test]
fn no_module_imports_one_that_imports_it_back() {
    let edges = graph();
    let found = cycles(&edges);
    let shown: Vec<String> = found
        .iter()
        .map(|c| {
            let members: BTreeSet<&String> = c.iter().collect();
            let arrows: Vec<String> = c
                .iter()
                .flat_map(|f| {
                    edges[f]
                        .iter()
                        .filter(|g| members.contains(g))
                        .map(move |g| format!("{f} -> {g}"))
                })
                .collect();
            arrows.join(", ")
        })
        .collect();
    assert!(found.is_empty(), "import cycles:\n{}", shown.join("\n"));
}

#[test]
fn modules_use_only_their_own_layer_and_the_ones_below() {
    let edges = graph();
    let mut up = Vec::new();
    for (f, deps) in &edges {
        if f == "lib.rs" {
            continue;
        }
        let from = top(f);
        let Some(lf) = layer(&from) else {
            up.push(format!("{f}: module {from} is in no layer"));
            continue;
        };
        for g in deps {
            let to = top(g);
            if to == from {
                continue;
            }
            match layer(&to) {
                Some(lt) if lt >= lf => {}
                _ => up.push(format!("{f} -> {g}")),
            }
        }
    }
    assert!(up.is_empty(), "dependencies that point up:\n{}", up.join("\n"));
}

#[test]
fn the_checker_sees_cycles_through_use_lines_paths_and_reexports() {
    let dir = std::env::temp_dir().join(format!("lab-layers-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("a")).unwrap();
    let write = |p: &str, s: &str| std::fs::write(dir.join(p), s).unwrap();
    write("lib.rs", "pub mod a;\npub mod b;\npub mod c;\n");
    // a/mod.rs re-exports a::x's item: a path through it reaches a/x.rs.
    write("a/mod.rs", "pub mod x;\npub use x::Thing;\n");
    write(
        "a/x.rs",
        "use crate::b::helper;\npub struct Thing;\n/// crate::c::never (a comment)\nfn f() { let _ = \"crate::c::never\"; }\n",
    );
    write(
        "b.rs",
        "pub fn helper() { let _ = crate::a::Thing; }\n#[cfg(test)]\nmod tests { use crate::c::Z; }\n",
    );
    write(
        "c.rs",
        "pub struct Z;\n#[macro_export]\nmacro_rules! m { () => { super::a::Thing; $crate::b::helper() }; }\n",
    );
    let edges = parse_crate(&dir).edges();
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(edges["a/x.rs"], BTreeSet::from(["b.rs".to_string()]));
    assert_eq!(edges["b.rs"], BTreeSet::from(["a/x.rs".to_string()]));
    assert!(edges["a/mod.rs"].is_empty(), "a re-export is not a dependency");
    // A macro's body names the crate's items with `$crate`; the rest resolve where it is used.
    assert_eq!(edges["c.rs"], BTreeSet::from(["b.rs".to_string()]));
    assert_eq!(cycles(&edges), vec![vec!["a/x.rs".to_string(), "b.rs".to_string()]]);
}

/// Functions longer than this many lines (comments included) are split
/// into named parts (issue 66); test modules' tables are left out.
const LONGEST_FUNCTION: usize = 120;

/// Each function with a body in `src` (outside `#[cfg(test)]` modules):
/// (lines from its `fn` line to its closing brace, its name). rustfmt's
/// layout is assumed: a body ends at the first `}` line at the `fn`
/// line's indentation.
fn function_lengths(src: &str) -> Vec<(usize, String)> {
    let lines: Vec<&str> = src.lines().collect();
    let end = lines
        .iter()
        .position(|l| l.trim() == "#[cfg(test)]")
        .unwrap_or(lines.len());
    let mut out = Vec::new();
    for (i, l) in lines[..end].iter().enumerate() {
        let t = l.trim_start();
        let indent = l.len() - t.len();
        let t = t
            .strip_prefix("pub ")
            .or_else(|| t.strip_prefix("pub(crate) "))
            .unwrap_or(t);
        let t = t.strip_prefix("pub(super) ").unwrap_or(t);
        let t = t.strip_prefix("const ").unwrap_or(t);
        let t = t.strip_prefix("async ").unwrap_or(t);
        let Some(rest) = t.strip_prefix("fn ") else { continue };
        let name: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
        // The signature ends at a line ending `{` (a body) or `;` (none).
        let Some(open) = (i..end).find(|&j| {
            let s = lines[j].trim_end();
            s.ends_with('{') || s.ends_with(';')
        }) else {
            continue;
        };
        if !lines[open].trim_end().ends_with('{') || lines[open].trim_end().ends_with("{}") {
            continue;
        }
        let close = " ".repeat(indent) + "}";
        if let Some(last) = (open + 1..end).find(|&j| lines[j] == close) {
            out.push((last - i + 1, name));
        }
    }
    out
}

#[test]
fn no_function_in_src_is_over_120_lines() {
    let mut files = Vec::new();
    rs_files(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"), &mut files);
    let mut long = Vec::new();
    for f in &files {
        for (n, name) in function_lengths(&std::fs::read_to_string(f).unwrap()) {
            if n > LONGEST_FUNCTION {
                long.push(format!("{} {name}: {n} lines", f.display()));
            }
        }
    }
    assert!(files.len() > 50, "{} files", files.len());
    assert!(long.is_empty(), "split into named parts:\n{}", long.join("\n"));
}

#[test]
fn function_lengths_count_bodies_and_skip_declarations() {
    let src = "trait T {\n    fn decl(&self);\n}\nimpl T for X {\n    fn decl(&self) {\n        a();\n        b();\n    }\n}\npub async fn f(\n    x: i32,\n) -> i32 {\n    x\n}\nfn unit() {}\n#[cfg(test)]\nmod tests {\n    fn t() {\n    }\n}\n";
    assert_eq!(
        function_lengths(src),
        vec![(4, "decl".to_string()), (5, "f".to_string())]
    );
}
