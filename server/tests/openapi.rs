//! `GET /api/openapi.json` is generated from the code (server/src/openapi.rs): these tests keep
//! the router and the document from drifting, and check that the derived schemas say what the
//! server accepts.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Every `#[utoipa::path(METHOD, path = "…")]` of the server's source.
fn annotated(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (i, _) in text.match_indices("#[utoipa::path(") {
        let rest = &text[i + "#[utoipa::path(".len()..];
        let method = rest.trim_start().split(',').next().unwrap().trim().to_uppercase();
        let p = rest.split("path = \"").nth(1).unwrap().split('"').next().unwrap();
        out.push((method, p.to_owned()));
    }
    out
}

/// The router and the document cannot drift: every route of the server
/// is registered with `routes!` (no plain axum routing anywhere in the
/// server's source), so it is in the document; and the document holds
/// exactly the routes annotated in the source, each once.
#[test]
fn every_route_is_in_the_document() {
    let mut files = Vec::new();
    sources(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"), &mut files);
    let mut expected = BTreeSet::new();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        if f.ends_with("openapi.rs") {
            continue;
        }
        let without_ours = text.replace("OpenApiRouter", "");
        for plain in [
            ".route(",
            ".route_service(",
            ".nest_service(",
            "Router::new()",
            "routing::",
        ] {
            assert!(
                !without_ours.contains(plain),
                "{}: `{plain}` registers a route outside the OpenAPI document; use utoipa_axum's routes! \
                 with a #[utoipa::path]",
                f.display()
            );
        }
        for route in annotated(&text) {
            assert!(expected.insert(route.clone()), "{route:?} annotated twice");
        }
    }
    let doc = server::openapi::document();
    let mut documented = BTreeSet::new();
    for (path, item) in &doc.paths.paths {
        let item = serde_json::to_value(item).unwrap();
        for method in ["get", "post", "put", "patch", "delete"] {
            if let Some(op) = item.get(method) {
                documented.insert((method.to_uppercase(), path.clone()));
                // Every operation says what it answers, with a body schema
                // for each JSON answer.
                let responses = op["responses"].as_object().unwrap();
                assert!(!responses.is_empty(), "{method} {path}: no responses");
                for (status, r) in responses {
                    if let Some(json) = r.pointer("/content/application~1json") {
                        assert!(json.get("schema").is_some(), "{method} {path} {status}: no schema");
                    }
                }
            }
        }
    }
    assert_eq!(documented, expected, "documented routes vs annotated handlers");
    for must in [
        ("GET", "/api/games/{id}/ws"),
        ("POST", "/api/games"),
        ("GET", "/api/openapi.json"),
        ("GET", "/healthz"),
    ] {
        assert!(documented.contains(&(must.0.to_owned(), must.1.to_owned())), "{must:?}");
    }
}

/// The schemas derived from the protocol types say what the server
/// accepts: unknown fields refused where serde refuses them, and the
/// snapshot's fields (the hand-written document lacked some) present.
#[test]
fn schemas_follow_the_types() {
    let doc: serde_json::Value = serde_json::from_str(server::openapi::json()).unwrap();
    let schemas = &doc["components"]["schemas"];
    for closed in [
        "CreateGame",
        "Credentials",
        "JoinGame",
        "AddBot",
        "TimeControl",
        "CreateTournament",
    ] {
        assert_eq!(
            schemas[closed]["additionalProperties"],
            serde_json::json!(false),
            "{closed} refuses unknown fields"
        );
    }
    let snapshot = schemas["Snapshot"]["properties"].as_object().unwrap();
    for field in ["departures", "limits", "settings", "seats", "status"] {
        assert!(snapshot.contains_key(field), "Snapshot.{field}");
    }
    assert!(schemas["ErrorBody"]["properties"]["code"].is_object());
    // Two protocol types named alike get names of their own (schemathesis
    // found the tournament's Scoring described by 三国暗棋's).
    assert!(
        schemas["Scoring"]["properties"]["win"].is_object(),
        "{}",
        schemas["Scoring"]
    );
    assert!(schemas["AnqiScoring"]["enum"].is_array());
    assert!(doc["components"]["securitySchemes"]["bearer"].is_object());
}
