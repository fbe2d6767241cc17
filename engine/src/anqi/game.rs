//! The game record (stub).
