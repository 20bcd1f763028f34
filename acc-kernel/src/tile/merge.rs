//! A gang loop whose body is one vector loop (after assignments of its bounds), seen as the
//! collapsed pair of loops it is: `for i (gang) { for j (vector) { body } }` with `j`'s range
//! the same for every `i` runs each `(i, j)` once in any order, as `collapse(2)` does, so
//! [`super::auto_tile`] may tile it 16 x 16 where its elements each run a sequential loop over
//! data the others read (a matrix product written as gang and vector loops: each block then
//! stages a chunk of both matrices through shared memory, rather than each thread of a row
//! reading its column alone).

use super::super::*;

/// The gang loop `s` as a collapsed pair with its vector loop, and the assignments of the
/// vector loop's bounds that must run before it, where `s` has that shape: a one-level gang
/// loop (not vector) without `tile`, reductions or private variables, whose body is
/// assignments of locals the vector loop's range reads (from values the gang loop does not
/// change) and then a one-level vector loop without `tile`, reductions or private variables.
pub(super) fn as_collapsed(f: &Function, s: &Stmt) -> Option<(Vec<Stmt>, Stmt)> {
    let Stmt::For {
        levels: outer,
        schedule: Some(sched),
        reductions,
        private,
        tile,
        body,
    } = s
    else {
        return None;
    };
    let [outer_level] = outer.as_slice() else {
        return None;
    };
    if !sched.gang
        || sched.worker
        || sched.vector
        || !tile.is_empty()
        || !reductions.is_empty()
        || !private.is_empty()
    {
        return None;
    }
    let (last, before) = body.split_last()?;
    let Stmt::For {
        levels: inner,
        schedule: Some(inner_sched),
        reductions: inner_reductions,
        private: inner_private,
        tile: inner_tile,
        body: inner_body,
    } = last
    else {
        return None;
    };
    let [inner_level] = inner.as_slice() else {
        return None;
    };
    if !inner_sched.vector
        || inner_sched.gang
        || !inner_tile.is_empty()
        || !inner_reductions.is_empty()
        || !inner_private.is_empty()
    {
        return None;
    }
    // The statements before the vector loop: assignments of its bounds' locals, each from
    // values that are the same for every gang iteration.
    let mut bounds = std::collections::HashSet::new();
    for h in [inner_level.start, inner_level.step, inner_level.trips] {
        walk::locals_read(f, h, &mut bounds);
    }
    let mut assigned_here = std::collections::HashSet::new();
    for st in before {
        let Stmt::Assign { local, value } = st else {
            return None;
        };
        let mut read = std::collections::HashSet::new();
        walk::locals_read(f, *value, &mut read);
        let mut arrays = std::collections::HashSet::new();
        walk::arrays_loaded(f, *value, &mut arrays);
        let varies =
            read.contains(&outer_level.var) || read.iter().any(|l| assigned_here.contains(l));
        if !bounds.contains(local) || varies || !arrays.is_empty() {
            return None;
        }
        assigned_here.insert(*local);
    }
    // The range may read only those locals and values the gang loop does not change.
    if bounds.contains(&outer_level.var) || walk::assigns(inner_body, &|l| bounds.contains(&l)) {
        return None;
    }
    let merged = Stmt::For {
        levels: vec![outer_level.clone(), inner_level.clone()],
        schedule: Some(Schedule {
            gang: true,
            worker: false,
            vector: true,
        }),
        reductions: Vec::new(),
        private: Vec::new(),
        tile: Vec::new(),
        body: inner_body.clone(),
    };
    Some((before.to_vec(), merged))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::samples;

    fn first_grid_loop(k: &Kernel) -> &Stmt {
        k.function
            .body
            .iter()
            .find(|s| {
                matches!(
                    s,
                    Stmt::For {
                        schedule: Some(_),
                        ..
                    }
                )
            })
            .expect("a parallel loop")
    }

    #[test]
    fn a_gang_loop_over_one_vector_loop_is_a_collapsed_pair() {
        let k = samples::matmul_gang_vector();
        let (before, pair) = as_collapsed(&k.function, first_grid_loop(&k)).expect("merged");
        // The vector loop's bounds (`__start`, `__end`) move before the pair.
        assert_eq!(before.len(), 2);
        let Stmt::For {
            levels, schedule, ..
        } = pair
        else {
            panic!("a loop")
        };
        assert_eq!(levels.len(), 2);
        assert_eq!(schedule.map(|s| s.levels()), Some(vec!["gang", "vector"]));
    }

    #[test]
    fn other_gang_loops_keep_their_shape() {
        // A vector loop with a reduction and code after it (matvec), three vector loops
        // (softmax), a gang loop with private arrays (row sweeps).
        for k in [samples::matvec(), samples::softmax(), samples::row_sweeps()] {
            assert!(
                as_collapsed(&k.function, first_grid_loop(&k)).is_none(),
                "{}",
                k.name
            );
        }
    }
}
