//! Who runs a case: the `Backend` trait, the built-in reference and a backend process.

pub mod attributes;
pub mod checkout;
pub mod child;
pub mod dump;
pub mod facts;
pub mod hello;
pub mod interface;
pub mod interrupt;
pub mod process;
pub mod protocol;
pub mod serve;
