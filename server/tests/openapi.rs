//! `GET /api/openapi.json` is written by hand (server/src/openapi.json); this test keeps it honest:
//! every route the server's code registers (`.route("PATH", get(..).post(..))` anywhere under
//! `src/`) is described with each of its methods, and the document describes no route that does
//! not exist.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Routes registered in the code: path → methods.
fn routes_in_code() -> BTreeMap<String, BTreeSet<String>> {
    let mut routes = BTreeMap::new();
    let mut stack = vec![Path::new(env!("CARGO_MANIFEST_DIR")).join("src")];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                scan(&std::fs::read_to_string(&path).unwrap(), &mut routes);
            }
        }
    }
    routes
}

/// Finds `.route("PATH", METHODS)` calls; METHODS is read up to the call's closing parenthesis.
fn scan(src: &str, routes: &mut BTreeMap<String, BTreeSet<String>>) {
    let mut rest = src;
    while let Some(at) = rest.find(".route(\"") {
        rest = &rest[at + 8..];
        let Some(end) = rest.find('"') else { break };
        let path = rest[..end].to_string();
        let mut depth = 1;
        let mut args_end = rest.len();
        for (i, c) in rest[end..].char_indices() {
            match c {
                '(' => depth += 1,
                ')' => {
                    depth -= 1;
                    if depth == 0 {
                        args_end = end + i;
                        break;
                    }
                }
                _ => {}
            }
        }
        let args = &rest[end..args_end];
        let methods = routes.entry(path).or_default();
        for m in ["get", "post", "put", "patch", "delete"] {
            let called = args.match_indices(&format!("{m}(")).any(|(i, _)| {
                let before = args[..i].chars().next_back();
                !before.is_some_and(|c| c.is_alphanumeric() || c == '_')
            });
            if called {
                methods.insert(m.to_string());
            }
        }
    }
}

#[test]
fn openapi_describes_every_route_and_only_those() {
    let doc: serde_json::Value =
        serde_json::from_str(include_str!("../src/openapi.json")).expect("openapi.json is JSON");
    assert!(doc["openapi"].as_str().is_some_and(|v| v.starts_with("3.")));
    let described: BTreeMap<String, BTreeSet<String>> = doc["paths"]
        .as_object()
        .expect("paths")
        .iter()
        .map(|(path, item)| (path.clone(), item.as_object().unwrap().keys().cloned().collect()))
        .collect();
    let code = routes_in_code();
    assert!(code.len() >= 10, "the scan found the routes: {code:?}");
    for (path, methods) in &code {
        assert!(!methods.is_empty(), "{path}: no method found in the code");
        let Some(doc_methods) = described.get(path) else {
            panic!("{path} is served but not described in server/src/openapi.json");
        };
        for m in methods {
            assert!(
                doc_methods.contains(m),
                "{} {path} is served but not described",
                m.to_uppercase()
            );
        }
        for m in doc_methods
            .iter()
            .filter(|m| ["get", "post", "put", "patch", "delete"].contains(&m.as_str()))
        {
            assert!(
                methods.contains(m),
                "{} {path} is described but not served",
                m.to_uppercase()
            );
        }
    }
    for path in described.keys() {
        assert!(code.contains_key(path), "{path} is described but not served");
    }
}

#[test]
fn the_scan_reads_chained_methods() {
    let mut r = BTreeMap::new();
    scan(
        r#"Router::new().route("/a", post(create).get(list)).route("/b/{id}", get(crate::ws::upgrade))"#,
        &mut r,
    );
    assert_eq!(r["/a"], BTreeSet::from(["get".to_string(), "post".to_string()]));
    assert_eq!(r["/b/{id}"], BTreeSet::from(["get".to_string()]));
}
