//! The OpenAPI document of the HTTP API, generated from the code: every
//! route is registered through `utoipa_axum`'s `routes!` with its
//! `#[utoipa::path]` (statuses, parameters, request body), and every schema
//! is derived from the type the server really reads or writes (the
//! `protocol` crate's, with its `openapi` feature). Served at
//! `GET /api/openapi.json`; nothing is written by hand.

use std::sync::LazyLock;

use utoipa::OpenApi;
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};

/// The document's fixed part: title, words, the bearer scheme.
#[derive(OpenApi)]
#[openapi(
    info(
        title = "Sanguo game server",
        version = "1",
        description = "Three Kingdoms chess (三国象棋) server. Every refusal is JSON {code, message} \
            (ErrorBody) with the status its code calls for; 429 and some 503 carry Retry-After. \
            The WebSocket protocol of GET /api/games/{id}/ws: protocol/README.md."
    ),
    modifiers(&Bearer),
    components(schemas(protocol::ErrorBody, protocol::ErrorCode))
)]
struct Base;

/// Adds the `bearer` security scheme (`Authorization: Bearer TOKEN`, a
/// session token from `POST /api/sessions`, `/api/accounts` or `/api/login`).
struct Bearer;

impl utoipa::Modify for Bearer {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .description(Some("a session token"))
                    .build(),
            ),
        );
    }
}

/// The document's fixed part, to which the routes add their paths.
pub fn base() -> utoipa::openapi::OpenApi {
    Base::openapi()
}

/// The whole document.
pub fn document() -> utoipa::openapi::OpenApi {
    crate::http::api().into_openapi()
}

/// The whole document as JSON, built once.
pub fn json() -> &'static str {
    static JSON: LazyLock<String> = LazyLock::new(|| {
        document()
            .to_pretty_json()
            .unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"))
    });
    &JSON
}
