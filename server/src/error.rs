//! The HTTP API's error: a stable code and words, sent as `{code, message}`
//! with the status the code calls for. Internal errors are logged, never sent.

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use protocol::{ErrorBody, ErrorCode};

use crate::store::StoreError;

/// An API error.
#[derive(Debug)]
pub struct ApiError(pub ErrorBody);

impl ApiError {
    /// An error with a code and words.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> ApiError {
        ApiError(ErrorBody {
            code,
            message: message.into(),
        })
    }

    /// The HTTP status for the code.
    pub fn status(&self) -> StatusCode {
        use ErrorCode as C;
        match self.0.code {
            C::BadMessage | C::BadRequest | C::BadMove | C::BadChat | C::FrameTooLarge | C::UnsupportedProtocol => {
                StatusCode::BAD_REQUEST
            }
            C::Unauthorized | C::BadCredentials => StatusCode::UNAUTHORIZED,
            C::Forbidden | C::NotAPlayer | C::ChatDisabled => StatusCode::FORBIDDEN,
            C::NotFound => StatusCode::NOT_FOUND,
            C::SeatTaken
            | C::AlreadySeated
            | C::UsernameTaken
            | C::NotOpen
            | C::GameOver
            | C::Paused
            | C::TournamentState => StatusCode::CONFLICT,
            C::TooManyGames | C::RateLimited => StatusCode::TOO_MANY_REQUESTS,
            C::ShuttingDown | C::StorageUnavailable => StatusCode::SERVICE_UNAVAILABLE,
            C::Internal => StatusCode::INTERNAL_SERVER_ERROR,
            _ => StatusCode::UNPROCESSABLE_ENTITY,
        }
    }
}

impl From<ErrorBody> for ApiError {
    fn from(e: ErrorBody) -> Self {
        ApiError(e)
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
        (self.status(), Json(self.0)).into_response()
    }
}
