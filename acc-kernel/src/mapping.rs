//! How each loop of a kernel runs on the GPU backends, in words, for `ACC_INFO`: the decisions
//! the PTX and WGSL backends share (entry points per top-level statement, the gang/vector
//! split of [`Stmt::gang_phases`], tiles, grid-stride loops), described once, with the
//! reason wherever a loop the user marked parallel runs inside each thread.

use super::plan::{Caps, EntryPlan, Plan, Variant};
use super::*;

/// One loop (nest) of the kernel and how it runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoopMapping {
    /// The source line of its outermost level (0 where unknown).
    pub line: u32,
    /// Its loop variables, outermost first.
    pub vars: Vec<String>,
    /// How it runs, and why where that is not what its directive asks.
    pub how: String,
}

/// The loops of `k` in source order, each with how the GPU backends run it.
pub fn describe(k: &Kernel, w: &Caps) -> Vec<LoopMapping> {
    // The plan the backends run (`None` where the kernel cannot be split into entry points,
    // which its lowering reports: each loop is then described from its own decisions).
    let prepared = super::plan::prepare(k, w, Variant::default());
    let plan = prepared.as_ref().ok().map(|p| p.plan(w));
    // The kernel after the target's passes (staged `cache` windows, automatic tiles).
    let staged;
    let k = match &prepared {
        Ok(p) => &p.staged,
        Err(_) => {
            staged = super::plan::for_target(k, w);
            &staged
        }
    };
    let hosted = super::segments::host_loops::HostLoops::new(k);
    let mut out = Vec::new();
    entry_points(k, &k.function.body, &hosted, (w, plan.as_ref()), &mut out);
    caches(k, w, &mut out);
    spilled(k, (w, plan.as_ref()), &mut out);
    out.sort_by_key(|m| m.line);
    out
}

/// What became of each `cache` directive ([`super::cache_staging::stage`]), at its line.
fn caches(k: &Kernel, w: &Caps, out: &mut Vec<LoopMapping>) {
    use super::cache_staging::CacheOutcome;
    for c in &k.caches {
        let array = k
            .params
            .get(c.array as usize)
            .map_or("?", |p| p.name.as_str());
        let what = format!(
            "`cache` of {} element{} of `{array}`",
            c.len,
            if c.len == 1 { "" } else { "s" }
        );
        let how = match &c.outcome {
            CacheOutcome::Staged {
                round,
                elements,
                reads,
            } => format!(
                "{what}: staged in shared memory, the {block} copying {elements} elements (adjacent {thread}s on adjacent elements) for each {round} consecutive iterations, then synchronizing; {reads} of the loop's loads of `{array}` read the copy",
                block = w.block,
                thread = w.thread
            ),
            CacheOutcome::Hint(why) => format!("{what}: a hint the GPU devices do not act on: {why}"),
            CacheOutcome::Pending => format!("{what}: not looked at"),
        };
        out.push(LoopMapping {
            line: c.line,
            vars: vec![k
                .function
                .locals
                .get(c.loop_var as usize)
                .map_or_else(|| "?".into(), |l| l.name.clone())],
            how,
        });
    }
}

/// The loops of `body`, code at the region's top level or in the body of a host-driven loop.
fn entry_points(
    k: &Kernel,
    body: &[Stmt],
    hosted: &super::segments::host_loops::HostLoops,
    (w, plan): (&Caps, Option<&Plan<'_>>),
    out: &mut Vec<LoopMapping>,
) {
    for s in body {
        match s {
            Stmt::For {
                schedule: Some(_),
                levels,
                ..
            } => grid_loop(
                k,
                s,
                levels
                    .first()
                    .is_some_and(|l| k.auto_tiled.contains(&l.var)),
                (w, plan),
                out,
            ),
            Stmt::For { levels, body, .. } if hosted.driven(s) => {
                push(
                    out,
                    k,
                    levels,
                    format!(
                        "sequential, driven by the host: each iteration launches the parallel loops of its body over the grid{}",
                        if hosted.var_used(levels[0].var) {
                            ", each launch taking the loop's variable as an argument"
                        } else {
                            ""
                        }
                    ),
                );
                entry_points(k, body, hosted, (w, plan), out);
            }
            Stmt::If { accept, reject, .. } if hosted.decided(s) => {
                entry_points(k, accept, hosted, (w, plan), out);
                entry_points(k, reject, hosted, (w, plan), out);
            }
            other => sequential_code(k, other, hosted, w, out),
        }
    }
}

/// The private arrays kept in device memory ([`super::spill`]), each at the outermost parallel
/// loop using it: what each costs.
fn spilled(k: &Kernel, (w, plan): (&Caps, Option<&Plan<'_>>), out: &mut Vec<LoopMapping>) {
    use super::spill::{show_bytes, Spilled, THREAD_ARRAY_BYTES};
    let spilled = plan.map_or_else(
        || Spilled::of(k, |t| w.elem_bytes.of(t)),
        |p| p.spilled.clone(),
    );
    let (block, thread) = (w.block, w.thread);
    for a in &spilled.arrays {
        let mut at: Option<Vec<LoopLevel>> = None;
        walk::for_each_stmt(&k.function.body, &mut |s| {
            if let Stmt::For {
                schedule: Some(_),
                levels,
                body,
                ..
            } = s
            {
                if at.is_none() && walk::arrays_used(&k.function, body).contains(&a.local) {
                    at = Some(levels.clone());
                }
            }
        });
        let name = &k.function.locals[a.local as usize].name;
        out.push(LoopMapping {
            line: at.as_ref().and_then(|l| l.first()).map_or(0, |l| l.line),
            vars: at.as_ref().map_or_else(Vec::new, |l| vars(k, l)),
            how: format!(
                "the private array `{name}` ({} elements of {}, {} per {thread}) is larger than the {} each {thread} holds itself: it lives in device memory, a copy per {thread} of the launch (adjacent {thread}s on adjacent addresses), each access a global memory access; the grid keeps to the {block}s whose copies fit, at most as many as the device runs at once",
                a.len,
                a.ty,
                show_bytes(a.bytes()),
                show_bytes(THREAD_ARRAY_BYTES)
            ),
        });
    }
}

fn vars(k: &Kernel, levels: &[LoopLevel]) -> Vec<String> {
    levels
        .iter()
        .map(|l| {
            k.function
                .locals
                .get(l.var as usize)
                .map_or_else(|| "?".into(), |v| v.name.clone())
        })
        .collect()
}

fn levels_of(s: &Schedule) -> String {
    let v = s.levels();
    if v.is_empty() {
        "independent".into()
    } else {
        v.join(" ")
    }
}

fn push(out: &mut Vec<LoopMapping>, k: &Kernel, levels: &[LoopLevel], how: String) {
    out.push(LoopMapping {
        line: levels.first().map_or(0, |l| l.line),
        vars: vars(k, levels),
        how,
    });
}

/// A parallel loop at the top of the region: an entry point over the grid (`auto`: acc tiled
/// it, [`super::tile::auto_tile`]).
fn grid_loop(
    k: &Kernel,
    s: &Stmt,
    auto: bool,
    (w, plan): (&Caps, Option<&Plan<'_>>),
    out: &mut Vec<LoopMapping>,
) {
    let Stmt::For {
        levels,
        schedule: Some(sched),
        reductions,
        tile,
        body,
        ..
    } = s
    else {
        return;
    };
    let (block, thread, threads) = (w.block, w.thread, w.threads);
    let red = if reductions.is_empty() {
        String::new()
    } else {
        format!("; its reductions combine across each {block}'s {thread}s, then across {block}s")
    };
    if !tile.is_empty() {
        tiled_loop(k, s, auto, (w, &red), out);
        return;
    }
    // The plan's decisions for this loop's entry point.
    let own;
    let planned = levels
        .first()
        .and_then(|l| plan.and_then(|p| p.grid_entry(l.line, l.var)));
    let entry = match planned {
        Some(e) => e,
        None => {
            own = EntryPlan::of(k, s, w);
            &own
        }
    };
    if let Some(phases) = &entry.phases {
        gang_loop(k, s, (phases, entry.short_vector), (w, &red), out);
        return;
    }
    let collapsed = if levels.len() > 1 {
        format!(" (collapse({}): one iteration space)", levels.len())
    } else {
        String::new()
    };
    let private = entry
        .privatized
        .and_then(|p| k.params.get(p.array as usize))
        .map_or(String::new(), |p| {
            format!(
                "; each {block}'s atomic updates of `{}` combine in its own shared memory first, where the array is small",
                p.name
            )
        });
    // A spelling known to be slow, and what to write instead.
    let hint = super::tile::tile_hint(k, levels, body, w.shared_array_bytes)
        .map_or(String::new(), |h| format!("; slow as written: {h}"));
    push(
        out,
        k,
        levels,
        format!(
            "{}: grid-stride over {block}s of {threads} {thread}s, an iteration per {thread}{collapsed}{red}{private}{hint}",
            levels_of(sched)
        ),
    );
    let why = match s.gang_phases_or_why(&k.function, w.shared_array_bytes) {
        Err(why)
            if body.iter().any(
                |s| matches!(s, Stmt::For { schedule: Some(v), .. } if v.vector || v.worker),
            ) =>
        {
            format!("{why}, so each iteration of the gang loop runs on one thread")
        }
        _ => "inside each iteration of the parallel loop".into(),
    };
    inner(k, body, w, &why, out);
}

/// A tiled nest at the top of the region: a block per tile (`auto`: acc tiled it).
fn tiled_loop(
    k: &Kernel,
    s: &Stmt,
    auto: bool,
    (w, red): (&Caps, &str),
    out: &mut Vec<LoopMapping>,
) {
    let Stmt::For {
        levels,
        schedule: Some(sched),
        tile,
        body,
        ..
    } = s
    else {
        return;
    };
    let (block, thread, threads) = (w.block, w.thread, w.threads);
    let sizes: Vec<String> = tile.iter().map(u32::to_string).collect();
    let order = match super::tile::store_contiguous_level(&k.function, levels, body) {
        Some(at) if at + 1 != levels.len() => format!(
            "; adjacent {thread}s take adjacent `{}`, along which every store runs",
            k.function.locals[levels[at].var as usize].name
        ),
        _ => String::new(),
    };
    let staging = super::tile::staging(k, w.shared_array_bytes, s);
    let names: Vec<String> = staging.reads.iter().map(|n| format!("`{n}`")).collect();
    let staged = match &staging.chunked {
        _ if names.is_empty() => String::new(),
        Some((var, chunk)) => format!(
            "; each element's loop `{var}` runs {chunk} iterations at a time, the {block} first copying what they read of {} into shared memory (adjacent {thread}s along each array), its {thread}s synchronizing before and after",
            names.join(", ")
        ),
        None => format!(
            "; its reads of {} run along the other loop, so the {block} first copies them into shared memory a tile at a time, adjacent {thread}s along the reads",
            names.join(", ")
        ),
    };
    push(
        out,
        k,
        levels,
        if auto {
            format!(
                "{}: tiled by acc, {} iterations to a {block}{} (no `tile` clause), its {threads} {thread}s sharing them{staged}{red}",
                levels_of(sched),
                tile.iter().product::<u32>(),
                if tile.len() > 1 {
                    format!(
                        " ({})",
                        tile.iter().map(|t| t.to_string()).collect::<Vec<_>>().join(" x ")
                    )
                } else {
                    String::new()
                }
            )
        } else {
            format!(
                "{} tile({}): a {block} per tile, the tile's {} elements shared by its {threads} {thread}s{order}{staged}{red}",
                levels_of(sched),
                sizes.join(", "),
                tile.iter().product::<u32>()
            )
        },
    );
    let from = out.len();
    inner(k, body, w, "in each element of a tile", out);
    if let Some((var, chunk)) = &staging.chunked {
        for m in &mut out[from..] {
            if m.vars == [var.clone()] {
                m.how = format!(
                    "sequential, in each {thread} for its element of the tile, {chunk} iterations at a time between the {block}'s copies into shared memory"
                );
            }
        }
    }
}

/// A gang loop whose iterations each take a block (or a warp, `short`), its threads sharing
/// the vector loops of `phases`.
fn gang_loop(
    k: &Kernel,
    s: &Stmt,
    (phases, short): (&super::GangPhases<'_>, bool),
    (w, red): (&Caps, &str),
    out: &mut Vec<LoopMapping>,
) {
    let Stmt::For {
        levels,
        schedule: Some(sched),
        ..
    } = s
    else {
        return;
    };
    let (block, thread, threads) = (w.block, w.thread, w.threads);
    // At most 32 vector iterations: a warp per gang iteration on nvidia, a workgroup of 32
    // invocations on wgpu.
    let warp = w.warp_lanes.is_some() && short;
    let (block, threads) = match (warp, short) {
        (true, _) => ("warp", 32),
        (false, true) => (block, 32),
        _ => (block, threads),
    };
    // A gang loop over one vector loop is the collapsed pair it is: the pair's known slow
    // spellings, and what to write instead.
    let hint = super::tile::gang_pair_hint(k, s, w.shared_array_bytes)
        .map_or(String::new(), |h| format!("; slow as written: {h}"));
    push(
        out,
        k,
        levels,
        format!(
            "{}: a {block} per iteration (grid-stride over {block}s{}), its scalar code repeated on each of its {thread}s{red}{hint}",
            levels_of(sched),
            if short { ", the vector_length being at most 32" } else { "" }
        ),
    );
    if !phases.shared_arrays.is_empty() {
        let names: Vec<String> = phases
            .shared_arrays
            .iter()
            .map(|&l| format!("`{}`", k.function.locals[l as usize].name))
            .collect();
        push(
            out,
            k,
            levels,
            format!(
                "{}: the gang's {} {} in the {block}'s shared memory, one copy its {thread}s share",
                levels_of(sched),
                if names.len() == 1 { "array" } else { "arrays" },
                names.join(", ") + if names.len() == 1 { " lives" } else { " live" }
            ),
        );
    }
    let loops = phases.loops();
    let count = loops.len();
    for (at, l) in loops.into_iter().enumerate() {
        let last = at + 1 == count;
        let (vector, block_reductions) = (&*l.vector, &l.block_reductions);
        if let Stmt::For {
            levels: vl,
            body: vb,
            schedule: vs,
            ..
        } = vector
        {
            let nest = if vl.len() > 1 {
                " (the worker loop and the vector loop in it as one nest, vector iterations on adjacent threads)"
            } else {
                ""
            };
            let fill = super::gang_phases::fill_of(&k.function, vector).is_some();
            let mut how = if fill {
                // `let t = [v; n]` of a gang's array: no loop of the source.
                format!("the fill of a gang's array: shared by the {threads} {thread}s of the {block} running its gang iteration")
            } else {
                format!(
                "{}: shared by the {threads} {thread}s of the {block} running its gang iteration{nest}",
                vs.as_ref().map_or_else(|| "vector".to_string(), levels_of)
            )
            };
            if count > 1 {
                how.push_str(&format!(
                    "; loop {} of the iteration's {count}, the {block} synchronizing after it",
                    at + 1
                ));
            }
            if !block_reductions.is_empty() {
                let holder = if block_reductions.iter().all(|r| r.first_thread_only) {
                    format!("the {block}'s first {thread} then holding the result, which only the code after the loop reads")
                } else {
                    format!("every {thread} then holding the result")
                };
                how.push_str(&format!(
                "; its reductions combine across the {block} (shared memory, barriers), {holder}"
            ));
            }
            if last && !phases.post.is_empty() {
                how.push_str(&format!(
                    "; the code after it runs on the {block}'s first {thread}"
                ));
            }
            if fill {
                // Reported at the gang loop's line, where the array is declared.
                let at: Vec<LoopLevel> = vl
                    .iter()
                    .map(|l| LoopLevel {
                        line: levels[0].line,
                        ..l.clone()
                    })
                    .collect();
                push(out, k, &at, how);
            } else {
                push(out, k, vl, how);
            }
            inner(k, vb, w, "in each thread of the vector loop", out);
        }
    }
    uniform_loops(k, &phases.steps, w, block, out);
    let post: Vec<Stmt> = phases.post.iter().map(|s| (*s).clone()).collect();
    inner(
        k,
        &post,
        w,
        "after the vector loop, on the block's first thread",
        out,
    );
}

/// The sequential loops around shared loops of a gang iteration: every thread of the block runs
/// them, in step.
fn uniform_loops(
    k: &Kernel,
    steps: &[super::gang_phases::Step],
    w: &Caps,
    block: &str,
    out: &mut Vec<LoopMapping>,
) {
    use super::gang_phases::Step;
    for s in steps {
        match s {
            Step::Sequential { levels, steps } => {
                push(
                    out,
                    k,
                    levels,
                    format!(
                        "sequential, around vector loops: every {} of the {block} runs it in step, synchronizing where its vector loops need",
                        w.thread
                    ),
                );
                uniform_loops(k, steps, w, block, out);
            }
            Step::If { accept, reject, .. } => {
                uniform_loops(k, accept, w, block, out);
                uniform_loops(k, reject, w, block, out);
            }
            Step::Redundant(_) | Step::Shared(_) | Step::Barrier => {}
        }
    }
}

/// Loops inside an iteration that one thread runs.
fn inner(k: &Kernel, body: &[Stmt], w: &Caps, why: &str, out: &mut Vec<LoopMapping>) {
    walk::for_each_stmt(body, &mut |s| {
        if let Stmt::For {
            levels, schedule, ..
        } = s
        {
            let how = match schedule {
                Some(sc) if sc.worker && !sc.vector => format!(
                    "worker: runs inside each {}: only a worker loop directly in a gang loop's body (after scalar assignments) is shared by a {}'s {}s",
                    w.thread, w.block, w.thread
                ),
                Some(sc) => format!(
                    "{}: runs inside each {}: {why}",
                    levels_of(sc),
                    w.thread
                ),
                None => format!(
                    "sequential, inside each {}{}",
                    w.thread,
                    kept_in_registers(k, s)
                ),
            };
            push(out, k, levels, how);
        }
    });
}

/// What sequential loop `s` keeps in registers ([`Kernel::kept_in_registers`]), in words, or
/// nothing.
fn kept_in_registers(k: &Kernel, s: &Stmt) -> String {
    let Stmt::For { levels, .. } = s else {
        return String::new();
    };
    let Some(var) = levels.first().map(|l| l.var) else {
        return String::new();
    };
    let mut names: Vec<String> = Vec::new();
    for &(_, array_id, field) in k.kept_in_registers.iter().filter(|(v, _, _)| *v == var) {
        let array = k
            .params
            .get(array_id as usize)
            .map_or("?", |a| a.name.as_str());
        let name = match field.and_then(|f| field_name(k, array_id, f)) {
            Some(field) => format!("`{array}[..].{field}`"),
            None => format!("`{array}[..]`"),
        };
        if !names.contains(&name) {
            names.push(name);
        }
    }
    if names.is_empty() {
        return String::new();
    }
    format!(
        "; the element{} it accumulates into ({}) kept in registers across it, written back after it",
        if names.len() == 1 { "" } else { "s" },
        names.join(", ")
    )
}

/// The name of field `f` of `array`'s elements, where it is a plain field.
fn field_name(k: &Kernel, array: ParamId, f: FieldId) -> Option<String> {
    let ParamKind::Array {
        elem: Elem::Struct(l),
        ..
    } = k.params.get(array as usize)?.kind
    else {
        return None;
    };
    let (outer, inner) = split_field(f);
    if inner.is_some() {
        return None;
    }
    l.fields.get(outer as usize).map(|f| f.name.to_string())
}

/// Region code outside the parallel loops: an entry point of one thread.
fn sequential_code(
    k: &Kernel,
    s: &Stmt,
    hosted: &super::segments::host_loops::HostLoops,
    w: &Caps,
    out: &mut Vec<LoopMapping>,
) {
    walk::for_each_stmt(std::slice::from_ref(s), &mut |s| {
        if let Stmt::For {
            levels, schedule, ..
        } = s
        {
            let why_not = levels.first().and_then(|l| hosted.why_not(l.var));
            let how = match (schedule, why_not) {
                (None, Some(why)) => format!(
                    "sequential, on one {}, the parallel loops inside it too: the host cannot drive it because {why}",
                    w.thread
                ),
                (schedule, _) => match schedule {
                Some(sc) => format!(
                    "{}: runs on one {}: it is inside region code the host does not drive (a loop around it says why; an `if` is decided by the host only when its condition is computed from the arguments and host loop variables)",
                    levels_of(sc),
                    w.thread
                ),
                None => format!(
                    "sequential, on one {}: region code outside the parallel loops",
                    w.thread
                ),
                },
            };
            push(out, k, levels, how);
        }
    });
}
