//! Tuples a routine returns (the IR has none): the routine's builder leaves the elements'
//! values, and the `let` destructuring the call takes them.

use super::{KernelBuilder, Value};

impl KernelBuilder {
    /// A routine returning a tuple leaves its elements here for the `let` that destructures
    /// the call (the IR has no tuples).
    pub fn set_tuple_result(&mut self, values: Vec<Value>) {
        self.tuple_result = Some(values);
    }

    /// The `n` elements the routine call `what` returned ([`Self::set_tuple_result`]).
    pub fn take_tuple_result(&mut self, n: usize, what: &str) -> Vec<Value> {
        match self.tuple_result.take() {
            Some(v) if v.len() == n => v,
            _ => {
                self.fail(format!(
                    "`{what}` destructured into {n} values, but it is not a routine returning a tuple of {n}"
                ));
                (0..n).map(|_| self.lit_bool(false)).collect()
            }
        }
    }
}
