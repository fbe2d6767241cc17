//! 三国演弈棋's own messages (RULES-YANYI): the fields its games add to the
//! shared ones. Filled by the yanyi work; the platform only names them.

use serde::{Deserialize, Serialize};

/// 三国演弈棋's block of [`crate::Status`].
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct YanyiStatus {}
