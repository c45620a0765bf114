//! The admission pipeline around CEL.
pub mod decision;
pub mod defaults;
pub mod diagnostics;
pub mod field;
pub mod labels;
pub mod matching;
pub mod names;
pub mod params;
pub mod request;
pub mod resources;
pub mod types;
pub mod validation;
pub mod yaml;
