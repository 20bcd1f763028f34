use super::*;
use crate::samples;

fn caps(warp_lanes: Option<u32>) -> Caps {
    Caps {
        warp_lanes,
        ..Caps::cuda_like()
    }
}

#[test]
fn every_grid_entry_is_planned_once_and_found_by_its_loop() {
    for k in [
        samples::saxpy(Scalar::F32),
        samples::softmax(),
        samples::row_sweeps(),
        samples::stencil_cached(),
    ] {
        let c = caps(Some(32));
        let prepared = prepare(&k, &c, Variant::default()).expect("prepared");
        let plan = prepared.plan(&c);
        assert_eq!(plan.entries.len(), prepared.segments.entries.len());
        for (e, p) in prepared.segments.entries.iter().zip(&plan.entries) {
            assert_eq!(p.single, e.single());
            if let Entry::Grid { looped, .. } = e {
                let (line, var) = first_level(looped).expect("a loop");
                let found = plan.grid_entry(line, var).expect("found by its loop");
                assert_eq!(found.block_threads, p.block_threads);
                assert_eq!(found.phases.is_some(), p.phases.is_some());
            }
        }
        assert!(plan.outline().contains("launches:"), "{}", plan.outline());
    }
}

#[test]
fn a_short_vector_takes_a_warp_or_a_block_of_32() {
    let mut k = samples::softmax();
    k.vector_length = Some(32);
    let (warps, none) = (caps(Some(32)), caps(None));
    let prepared = prepare(&k, &warps, Variant::default()).expect("prepared");
    let grid = |c| {
        prepared
            .plan(c)
            .entries
            .into_iter()
            .find(|e| e.phases.is_some())
            .map(|e| (e.short_vector, e.block_threads, e.gangs_per_block))
    };
    assert_eq!(grid(&warps), Some((true, 256, 8)));
    assert_eq!(grid(&none), Some((true, 32, 1)));
}

#[test]
fn a_proven_variant_runs_without_checks() {
    let k = samples::saxpy(Scalar::F32);
    assert!(!k.unchecked);
    let cuda = Caps::cuda_like();
    let proven = prepare(
        &k,
        &cuda,
        Variant {
            proven: true,
            narrow: false,
        },
    )
    .expect("prepared");
    assert!(proven.kernel.unchecked);
    assert!(
        !prepare(&k, &cuda, Variant::default())
            .expect("prepared")
            .kernel
            .unchecked
    );
}

/// Which arrays a loop's fast version covers is one decision (issue 41: the PTX and WGSL
/// emitters each computed it their own way).
#[test]
fn fast_versions_cover_the_arrays_indexed_by_the_loop_variable() {
    let names = |k: &Kernel, caps: &Caps| -> Vec<String> {
        let prepared = prepare(k, caps, Variant::default()).expect("prepared");
        let plan = prepared.plan(caps);
        let e = &plan.entries[0];
        e.versioned
            .iter()
            .flat_map(|(_, a)| a.iter().map(|&p| k.params[p as usize].name.clone()))
            .collect()
    };
    let cuda = Caps::cuda_like();
    let saxpy = samples::saxpy(Scalar::F32);
    assert_eq!(names(&saxpy, &cuda), ["x", "y"]);
    // A kernel without checks, or a proven variant, has one version.
    let unchecked = Kernel {
        unchecked: true,
        ..saxpy.clone()
    };
    assert!(names(&unchecked, &cuda).is_empty());
    // `keys[i]` is covered; `hist[keys[i] % n]` is not indexed by `i`.
    let hist = samples::histogram(Scalar::U32);
    assert_eq!(names(&hist, &cuda), ["keys"]);
    // Arrays updated atomically only where the target's atomics read the fast version.
    let atomics_apart = Caps {
        versions_atomic_arrays: false,
        ..Caps::cuda_like()
    };
    let counts = counts_by_index();
    assert_eq!(names(&counts, &cuda), ["keys", "counts"]);
    assert_eq!(names(&counts, &atomics_apart), ["keys"]);
}

/// `counts[i] += keys[i]` atomically, over `i` in `0..keys.len()`.
fn counts_by_index() -> Kernel {
    use crate::builder::KernelBuilder;
    use crate::{AtomicOp, BinaryOp, Schedule};
    let mut b = KernelBuilder::new("counts");
    let keys = b.param_array("keys", Scalar::U32, false);
    let counts = b.param_array("counts", Scalar::U32, true);
    let start = b.lit_int(0, Some(Scalar::USize));
    let n = b.len(keys);
    let sched = Schedule {
        gang: true,
        worker: false,
        vector: true,
    };
    b.for_range(
        "i",
        Some(Scalar::USize),
        start,
        n,
        false,
        Some(sched),
        &[],
        &[],
        |b, v| {
            let i = b.get(v[0]);
            let k = b.load(keys, i);
            b.atomic(counts, i, AtomicOp::Update(BinaryOp::Add), k, None, None);
        },
    );
    b.finish().expect("counts builds")
}

/// The target's shared memory decides what the passes stage: a `cache` window that fits 8 KiB
/// is staged, and left a hint on a target offering less (issue 41: one constant for every
/// target, decided before any target was known).
#[test]
fn the_targets_shared_memory_decides_what_is_staged() {
    use crate::cache_staging::CacheOutcome;
    let k = samples::stencil_cached();
    assert!(
        k.caches.iter().all(|c| c.outcome == CacheOutcome::Pending),
        "the builder runs no pass"
    );
    let staged = |bytes: u32| {
        let caps = Caps {
            shared_array_bytes: bytes,
            ..Caps::cuda_like()
        };
        let prepared = prepare(&k, &caps, Variant::default()).expect("prepared");
        prepared.staged.caches[0].outcome.clone()
    };
    assert!(matches!(
        staged(SHARED_ARRAY_BYTES),
        CacheOutcome::Staged { round: 512, .. }
    ));
    match staged(1024) {
        CacheOutcome::Hint(why) => assert!(why.contains("1024 bytes"), "{why}"),
        other => panic!("{other:?}"),
    }
}

/// Where a gang iteration takes a warp, its reductions' totals are in every lane: the plan
/// says so, and a target without warps (a block of 32) keeps the first-thread form.
#[test]
fn a_warp_per_iteration_reduces_into_every_lane() {
    let mut k = samples::matvec();
    let first_thread = |k: &Kernel, c: &Caps| {
        let prepared = prepare(k, c, Variant::default()).expect("prepared");
        let plan = prepared.plan(c);
        let e = plan
            .entries
            .iter()
            .find(|e| e.phases.is_some())
            .expect("a gang entry");
        (
            e.short_vector,
            e.phases
                .as_ref()
                .is_some_and(|p| p.first_thread_reductions()),
        )
    };
    let (warps, none) = (caps(Some(32)), caps(None));
    assert_eq!(first_thread(&k, &warps), (false, true));
    k.vector_length = Some(32);
    assert_eq!(first_thread(&k, &warps), (true, false));
    assert_eq!(first_thread(&k, &none), (true, true));
}
