//! Syntactic analysis of region bodies: which bindings are in scope, which variables a body
//! uses from outside and how, and rewriting those uses.

pub mod atomic;
pub mod bindings;
pub mod depend;
pub mod fastpath;
pub mod methods;
pub mod reduction_update;
pub mod subst;
pub mod uses;
