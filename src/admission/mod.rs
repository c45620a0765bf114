//! The admission pipeline around CEL.
pub mod field;
pub mod names;
pub mod yaml;
