//! placeholder
/// placeholder
#[derive(Debug)]
pub struct YanyiGame;
