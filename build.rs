//! Embeds every file under lab/ (specs, SQL, pgpool.conf) in the binary, so `lab` runs
//! without its source tree and a new file needs no list of its own. The
//! scenarios' files only: lab/examples/ holds specs a person runs with
//! `lab spec`, read from disk.
use std::path::Path;

fn walk(dir: &Path, root: &Path, out: &mut Vec<(String, String)>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir).expect("lab/ is readable").flatten().collect();
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let path = e.path();
        if path.is_dir() {
            if path != root.join("examples") {
                walk(&path, root, out);
            }
        } else if path
            .extension()
            .is_some_and(|x| x == "spec" || x == "sql" || x == "conf")
        {
            let name = path.strip_prefix(root).unwrap().to_string_lossy().replace('\\', "/");
            out.push((name, path.canonicalize().unwrap().to_string_lossy().into_owned()));
        }
    }
}

fn main() {
    let root = Path::new("lab");
    println!("cargo:rerun-if-changed=lab");
    let mut files = Vec::new();
    walk(root, root, &mut files);
    for (_, path) in &files {
        println!("cargo:rerun-if-changed={path}");
    }
    let body: String = files
        .iter()
        .map(|(name, path)| format!("    ({name:?}, include_str!({path:?})),\n"))
        .collect();
    let out = Path::new(&std::env::var("OUT_DIR").unwrap()).join("embedded.rs");
    std::fs::write(out, format!("pub static EMBEDDED: &[(&str, &str)] = &[\n{body}];\n")).unwrap();
}
