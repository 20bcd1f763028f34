use super::*;
use crate::ir::samples;

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
        let prepared = prepare(&k, Variant::default()).expect("prepared");
        let c = caps(Some(32));
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
    let prepared = prepare(&k, Variant::default()).expect("prepared");
    let (warps, none) = (caps(Some(32)), caps(None));
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
    let proven = prepare(
        &k,
        Variant {
            proven: true,
            narrow: false,
        },
    )
    .expect("prepared");
    assert!(proven.kernel.unchecked);
    assert!(
        !prepare(&k, Variant::default())
            .expect("prepared")
            .kernel
            .unchecked
    );
}
