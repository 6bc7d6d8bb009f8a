//! Who runs a case: the `Backend` trait, the built-in reference and a backend process.

pub(crate) mod attributes;
pub mod checkout;
pub(crate) mod child;
pub(crate) mod dump;
pub mod facts;
pub(crate) mod hello;
pub mod interface;
pub(crate) mod interrupt;
pub(crate) mod observed;
pub mod offline;
pub mod process;
pub(crate) mod protocol;
pub(crate) mod serve;
