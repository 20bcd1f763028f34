//! Reductions in kernels (3.3 section 2.5.15): the private copies of reduction variables,
//! initialized to the operator's identity, and the compute-level reductions combined into
//! their parameters.

use super::*;

impl KernelBuilder {
    /// A local holding a reduction's running value, of type `ty`, set to `op`'s initial value
    /// (3.3 section 2.5.15).
    pub fn reduction_local(&mut self, name: &str, ty: Scalar, op: ReduceOp) -> Var {
        let init = self.identity(op, ty);
        self.local(name, Some(ty), Some(init))
    }

    /// A private array `[ty; len]` for an element-wise reduction with `op`, each element set
    /// to the operator's identity (3.3 section 2.5.15: arrays reduce element by element).
    pub fn reduction_local_array(&mut self, name: &str, ty: Scalar, len: u32, op: ReduceOp) -> Var {
        let v = self.local_array(name, ty, len);
        self.reduction_arrays.push(v.id);
        self.for_each_element("k", len, |b, k| {
            let (i, init) = (b.get(k), b.identity(op, ty));
            b.set_elem(v, i, init);
        });
        v
    }

    /// The identity of `op` on `ty`.
    fn identity(&mut self, op: ReduceOp, ty: Scalar) -> Value {
        match (op, ty) {
            (ReduceOp::And, _)
            | (ReduceOp::BitAnd, Scalar::Bool)
            | (ReduceOp::Min, Scalar::Bool) => self.lit_bool(true),
            (ReduceOp::Or | ReduceOp::BitOr | ReduceOp::BitXor | ReduceOp::Max, Scalar::Bool)
            | (ReduceOp::Add, Scalar::Bool) => self.lit_bool(false),
            (ReduceOp::Mul, Scalar::Bool) => self.lit_bool(true),
            (ReduceOp::Or, _) => self.lit_bool(false),
            (ReduceOp::Add | ReduceOp::BitOr | ReduceOp::BitXor, t) if t.is_float() => {
                self.lit_float(0.0, Some(t))
            }
            (ReduceOp::Add | ReduceOp::BitOr | ReduceOp::BitXor, t) => self.lit_int(0, Some(t)),
            // (A complex product: the real part's; the imaginary part starts at 0.)
            (ReduceOp::Mul | ReduceOp::ComplexMul, t) if t.is_float() => {
                self.lit_float(1.0, Some(t))
            }
            (ReduceOp::Mul | ReduceOp::ComplexMul, t) => self.lit_int(1, Some(t)),
            (ReduceOp::BitAnd, t) => self.lit_int(-1, Some(t)),
            (ReduceOp::Max, t) if t.is_float() => self.lit_float(f64::NEG_INFINITY, Some(t)),
            (ReduceOp::Min, t) if t.is_float() => self.lit_float(f64::INFINITY, Some(t)),
            (ReduceOp::Max, t) => self.lit_int(int_limit(t, false), Some(t)),
            (ReduceOp::Min, t) => self.lit_int(int_limit(t, true), Some(t)),
        }
    }

    /// A compute-level reduction of `local`, combined into scalar parameter `into`.
    pub fn reduce_into(&mut self, local: Var, op: ReduceOp, into: ParamId) {
        self.reductions.push((local, op, into));
    }

    /// The IR reductions of a loop's `reductions` clause: a complex sum is two reductions, one
    /// per part; a complex product one of the pair (`ReduceOp::ComplexMul`, the imaginary part
    /// in the next local).
    pub(super) fn loop_reductions(&mut self, reductions: &[(Var, ReduceOp)]) -> Vec<Reduction> {
        let mut ir_reductions = Vec::new();
        for &(v, op) in reductions {
            match self.complex_locals.get(&v.id) {
                None => ir_reductions.push(Reduction { local: v.id, op }),
                Some(&im) => match op {
                    ReduceOp::Add => {
                        ir_reductions.push(Reduction { local: v.id, op });
                        ir_reductions.push(Reduction { local: im, op });
                    }
                    ReduceOp::Mul | ReduceOp::ComplexMul if im == v.id + 1 => {
                        ir_reductions.push(Reduction {
                            local: v.id,
                            op: ReduceOp::ComplexMul,
                        });
                    }
                    op => {
                        let name = self.function.locals[v.id as usize].name.clone();
                        let name = name.trim_end_matches(".re");
                        self.fail(if matches!(op, ReduceOp::Mul | ReduceOp::ComplexMul) {
                        format!("the complex product reduction into `{name}`: its parts are not held together (declare it with a complex value, `let mut {name} = Complex::new(..)`)")
                    } else {
                        format!("the reduction `{}` of the complex number `{name}` in a kernel (complex numbers reduce with `+` and `*`)", op.symbol())
                    });
                    }
                },
            }
        }
        ir_reductions
    }
}
