//! The HTTP API's error: a stable code and words, sent as `{code, message}`
//! with the status the code calls for. Internal errors are logged, never sent.

use axum::Json;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use protocol::{ErrorBody, ErrorCode};

use crate::store::StoreError;

/// An API error: the body, and for refusals that pass with time how long
/// to wait (the `Retry-After` header).
#[derive(Debug)]
pub struct ApiError(pub ErrorBody, pub Option<std::time::Duration>);

impl ApiError {
    /// An error with a code and words.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> ApiError {
        ApiError(
            ErrorBody {
                code,
                message: message.into(),
            },
            None,
        )
    }

    /// The same error with a `Retry-After` (whole seconds, at least 1).
    pub fn retry_after(mut self, wait: std::time::Duration) -> ApiError {
        self.1 = Some(wait);
        self
    }

    /// The HTTP status for the code.
    pub fn status(&self) -> StatusCode {
        use ErrorCode as C;
        match self.0.code {
            C::BadMessage
            | C::BadRequest
            | C::BadMove
            | C::BadChat
            | C::FrameTooLarge
            | C::UnsupportedProtocol
            | C::BadPassword
            | C::BadUsername => StatusCode::BAD_REQUEST,
            C::Unauthorized | C::BadCredentials => StatusCode::UNAUTHORIZED,
            C::Forbidden | C::NotAPlayer | C::ChatDisabled | C::RatedNeedsAccount | C::OutOfRatingRange => {
                StatusCode::FORBIDDEN
            }
            C::NotFound => StatusCode::NOT_FOUND,
            C::SeatTaken
            | C::AlreadySeated
            | C::UsernameTaken
            | C::NotOpen
            | C::GameOver
            | C::Paused
            | C::TournamentState => StatusCode::CONFLICT,
            C::TooManyGames | C::RateLimited => StatusCode::TOO_MANY_REQUESTS,
            C::ShuttingDown | C::StorageUnavailable | C::Busy => StatusCode::SERVICE_UNAVAILABLE,
            C::Internal => StatusCode::INTERNAL_SERVER_ERROR,
            _ => StatusCode::UNPROCESSABLE_ENTITY,
        }
    }
}

impl From<ErrorBody> for ApiError {
    fn from(e: ErrorBody) -> Self {
        ApiError(e, None)
    }
}

impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> Self {
        tracing::error!(error = %e, "store error");
        if e.is_outage() {
            return ApiError::new(
                ErrorCode::StorageUnavailable,
                "the store is unreachable; try again soon",
            );
        }
        ApiError::new(ErrorCode::Internal, "internal error")
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = self.status();
        let mut r = (status, Json(self.0)).into_response();
        if let Some(wait) = self.1 {
            let secs = (wait.as_secs() + u64::from(wait.subsec_nanos() > 0)).max(1);
            r.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(secs));
        }
        r
    }
}
