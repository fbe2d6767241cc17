//! What the benches share.

pub mod playouts;
