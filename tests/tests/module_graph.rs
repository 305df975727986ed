//! The runtime crate's top-level modules import each other without cycles, so each stage can be
//! read (and changed) knowing only the modules below it. A module's `crate::<name>` paths (in
//! code and doc links alike, tests excluded) are its imports.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Top-level module → the top-level modules it names.
fn graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut stack = vec![src.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let rel = path.strip_prefix(src).unwrap();
            let top = rel
                .components()
                .next()
                .unwrap()
                .as_os_str()
                .to_string_lossy();
            let top = top.trim_end_matches(".rs").to_owned();
            if top == "lib" || top == "private" {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            let code = text.split("#[cfg(test)]").next().unwrap_or("");
            let deps = graph.entry(top.clone()).or_default();
            for (i, _) in code.match_indices("crate::") {
                let name: String = code[i + "crate::".len()..]
                    .chars()
                    .skip_while(|c| *c == '{' || c.is_whitespace())
                    .take_while(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '_')
                    .collect();
                if !name.is_empty() && name != top {
                    deps.insert(name);
                }
            }
        }
    }
    let names: BTreeSet<String> = graph.keys().cloned().collect();
    for deps in graph.values_mut() {
        deps.retain(|d| names.contains(d));
    }
    graph
}

/// One module's cycle through `from`, if any (depth-first, with the path so far).
fn cycle_through(graph: &BTreeMap<String, BTreeSet<String>>, from: &str) -> Option<Vec<String>> {
    fn walk(
        graph: &BTreeMap<String, BTreeSet<String>>,
        node: &str,
        target: &str,
        path: &mut Vec<String>,
        seen: &mut BTreeSet<String>,
    ) -> bool {
        for next in &graph[node] {
            if next == target {
                return true;
            }
            if seen.insert(next.clone()) {
                path.push(next.clone());
                if walk(graph, next, target, path, seen) {
                    return true;
                }
                path.pop();
            }
        }
        false
    }
    let mut path = vec![from.to_owned()];
    walk(graph, from, from, &mut path, &mut BTreeSet::new()).then_some(path)
}

#[test]
fn the_runtime_crates_modules_have_no_import_cycles() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tool-contract/src");
    let graph = graph(&src);
    assert!(graph.len() > 20, "found only {} modules", graph.len());
    let cycles: Vec<String> = graph
        .keys()
        .filter_map(|m| cycle_through(&graph, m))
        .map(|c| c.join(" -> "))
        .collect();
    assert!(cycles.is_empty(), "import cycles: {cycles:#?}");
    // The façade is on top: no stage imports the registry.
    let importers: Vec<&String> = graph
        .iter()
        .filter(|(m, deps)| deps.contains("registry") && *m != "mcp")
        .map(|(m, _)| m)
        .collect();
    assert!(
        importers.is_empty(),
        "modules importing the registry: {importers:?}"
    );
}
