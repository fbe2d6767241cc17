//! 三国暗棋's own messages (RULES-ANQI): the fields its games add to the
//! shared ones. Filled by the anqi work; the platform only names them.

use serde::{Deserialize, Serialize};

/// 三国暗棋's block of [`crate::Status`]: public by construction (the room
/// never puts a face-down identity here).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AnqiStatus {}

/// 三国暗棋's settings in [`crate::GameSettings`] (mode, scoring, options);
/// absent means the defaults.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AnqiOptions {}
