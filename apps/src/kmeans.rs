//! Rodinia's kmeans (OpenACC version, as OpenARC's Rodinia suite has it:
//! `kmeans_clustering.c`): k-means clustering of `npoints` points of 34 features into 5
//! clusters. Each pass assigns every point to its nearest centre in one parallel loop, whose
//! iterations (`tid`) each take `UNROLLFAC` points strided by `nthreads`, and sums the points
//! of each cluster (`new_centers`, `new_centers_len`) as array reductions of that loop; the host
//! then divides the sums into the new centres. Passes repeat until no point changes cluster
//! (`delta > threshold`, threshold 0.001) or 500 passes (the small size settles after 28; the
//! large one's uniform points still move after 500, so it runs the 501 the original allows).
//!
//! The original's directives, kept: `data copyin(feature, membership) create(clusters)` on the
//! `do .. while` loop; `update device(clusters)` at the start of each pass; `kernels loop gang
//! worker independent private(i, index, index_fnp, max_dist) reduction(+: new_centers,
//! new_centers_len)` on the `tid` loop, `loop seq` on the `ii` loop inside it; `delta += 1` as
//! in the original, in `kernels`, whose scalar sum the compiler finds (the original names no
//! reduction for it: OpenARC, like acc, recognises it). Dropped: OpenARC's own `#pragma openarc
//! cuda sharedRW(new_centers_len)`, a placement hint that is not OpenACC. Added: `update
//! self(membership)` after the last pass, so that the memberships the device computed reach the
//! host to be checked (the original frees them unread).
//!
//! Rodinia reads `kdd_cup` (494,020 points of 34 features in [0, 1]); the port makes points of
//! the same shape, each feature a multiple of 1/16 in [0, 1). With such features every partial
//! sum of a cluster's coordinates (below 2^19, four bits after the point) is exact in `f32`, so
//! the reductions give the same sums in any order and the port's memberships and centres are
//! the plain loops' exactly, on every device. Timed as OpenARC's `main` times `cluster()`: the
//! whole `kmeans_clustering`, its data region and transfers included.

use std::time::Instant;

use crate::{compare, unit, Outcome};

/// Where the port comes from.
pub const ORIGIN: &str = "Rodinia 3.1 kmeans, OpenACC version as in OpenARC's Rodinia suite (swiftcurrent2018/openarc, test/benchmarks/openacc/rodinia/kmeans/kmeans_clustering.c)";

/// Features of a point (`_NATTRIBUTES`, kdd_cup's 34).
const NATTRIBUTES: usize = 34;
/// Clusters (`_NCLUSTERS`, Rodinia's default 5).
const NCLUSTERS: usize = 5;
/// Points per iteration of the parallel loop (`_UNROLLFAC_`; 10 divides kdd_cup's 494,020).
const UNROLLFAC: usize = 10;
/// The loop-terminating factor (Rodinia's default `-t 0.001`).
const THRESHOLD: f32 = 0.001;
const FLT_MAX: f32 = f32::MAX;

/// The clustering: returns the centres (`[nclusters][NATTRIBUTES]`, flattened) and the number
/// of passes; `membership` receives each point's cluster.
#[acc::offload]
#[allow(clippy::needless_range_loop, unused_assignments)]
pub fn kmeans_clustering(
    feature: &[f32],
    nfeatures: usize,
    npoints: usize,
    nclusters: usize,
    threshold: f32,
    membership: &mut [i32],
) -> (Vec<f32>, usize) {
    let mut n = 0;
    let mut loop_count = 0;
    let mut passes = 0;
    let mut delta: f32;
    // Added for inlining find_nearest_point(), as in the original.
    let (mut index_fnp, mut max_dist) = (0usize, FLT_MAX);
    // Added for unrolling of the parallel loop, as in the original.
    let (mut i, mut index) = (0usize, 0usize);
    let nthreads = npoints / UNROLLFAC;

    // clusters[NCLUSTERS][NATTRIBUTES], the first points as the first centres.
    let mut clusters = vec![0.0f32; nclusters * NATTRIBUTES];
    for i in 0..nclusters {
        for j in 0..nfeatures {
            clusters[i * NATTRIBUTES + j] = feature[n * NATTRIBUTES + j];
        }
        n += 1;
    }
    for i in 0..npoints {
        membership[i] = -1;
    }
    let mut new_centers_len = [0i32; NCLUSTERS];
    let mut new_centers = [[0.0f32; NATTRIBUTES]; NCLUSTERS];

    #[acc::data(copyin(feature[0..npoints * NATTRIBUTES], membership[0..npoints]), create(clusters[0..nclusters * NATTRIBUTES]))]
    {
        loop {
            delta = 0.0;
            acc::update!(device(clusters));
            #[acc::kernels_loop(
                gang,
                worker,
                independent,
                private(i, index, index_fnp, max_dist),
                reduction(+: new_centers, new_centers_len)
            )]
            for tid in 0..nthreads {
                #[acc::r#loop(seq)]
                for ii in 0..UNROLLFAC {
                    i = tid + ii * nthreads;
                    // find the index of the nearest cluster centre (find_nearest_point)
                    max_dist = FLT_MAX;
                    for i_fnp in 0..nclusters {
                        // euclid_dist_2, no square root
                        let mut dist = 0.0f32;
                        for i_ed in 0..nfeatures {
                            dist += (feature[i * NATTRIBUTES + i_ed]
                                - clusters[i_fnp * NATTRIBUTES + i_ed])
                                * (feature[i * NATTRIBUTES + i_ed]
                                    - clusters[i_fnp * NATTRIBUTES + i_ed]);
                        }
                        if dist < max_dist {
                            max_dist = dist;
                            index_fnp = i_fnp;
                        }
                    }
                    index = index_fnp;
                    // if the membership changes, increase delta by 1
                    if membership[i] != index as i32 {
                        delta += 1.0;
                    }
                    // assign the membership to object i
                    membership[i] = index as i32;
                    // update the new cluster centres: the sum of the objects in each
                    new_centers_len[index] += 1;
                    for j in 0..nfeatures {
                        new_centers[index][j] += feature[i * NATTRIBUTES + j];
                    }
                }
            }

            // replace the old cluster centres with new_centers
            for i in 0..nclusters {
                for j in 0..nfeatures {
                    if new_centers_len[i] > 0 {
                        clusters[i * NATTRIBUTES + j] =
                            new_centers[i][j] / new_centers_len[i] as f32;
                    }
                    new_centers[i][j] = 0.0; // set back to 0
                }
                new_centers_len[i] = 0; // set back to 0
            }
            passes += 1;

            // while (delta > threshold && loop++ < 500)
            if !(delta > threshold && {
                loop_count += 1;
                loop_count - 1 < 500
            }) {
                break;
            }
        }
        acc::update!(self(membership));
    }
    (clusters, passes)
}

/// The same passes in plain loops: the centres and the memberships.
#[allow(clippy::needless_range_loop)]
fn plain(feature: &[f32], npoints: usize) -> (Vec<f32>, Vec<i32>) {
    let nthreads = npoints / UNROLLFAC;
    let mut clusters = feature[..NCLUSTERS * NATTRIBUTES].to_vec();
    let mut membership = vec![-1i32; npoints];
    let mut loop_count = 0;
    loop {
        let mut delta = 0.0f32;
        let mut len = [0i32; NCLUSTERS];
        let mut sums = [[0.0f32; NATTRIBUTES]; NCLUSTERS];
        for tid in 0..nthreads {
            for ii in 0..UNROLLFAC {
                let i = tid + ii * nthreads;
                let p = &feature[i * NATTRIBUTES..(i + 1) * NATTRIBUTES];
                let mut best = (FLT_MAX, 0usize);
                for (c, centre) in clusters.chunks_exact(NATTRIBUTES).enumerate() {
                    let mut dist = 0.0f32;
                    for (a, b) in p.iter().zip(centre) {
                        dist += (a - b) * (a - b);
                    }
                    if dist < best.0 {
                        best = (dist, c);
                    }
                }
                let index = best.1;
                if membership[i] != index as i32 {
                    delta += 1.0;
                }
                membership[i] = index as i32;
                len[index] += 1;
                for (s, a) in sums[index].iter_mut().zip(p) {
                    *s += a;
                }
            }
        }
        for c in 0..NCLUSTERS {
            if len[c] > 0 {
                for j in 0..NATTRIBUTES {
                    clusters[c * NATTRIBUTES + j] = sums[c][j] / len[c] as f32;
                }
            }
        }
        let go_on = delta > THRESHOLD && loop_count < 500;
        if delta > THRESHOLD {
            loop_count += 1;
        }
        if !go_on {
            break;
        }
    }
    (clusters, membership)
}

/// kdd_cup's shape: `npoints` points of 34 features in [0, 1), each a multiple of 1/16.
fn input(npoints: usize) -> Vec<f32> {
    (0..(npoints * NATTRIBUTES) as u64)
        .map(|k| ((unit(11, k) * 16.0).floor() / 16.0) as f32)
        .collect()
}

/// The points of each size: 1,000 (CI) and kdd_cup's 494,020.
fn size(large: bool) -> usize {
    if large {
        494_020
    } else {
        1_000
    }
}

/// Runs the clustering on the current device at the small or large size, timed and verified.
pub fn run_size(large: bool) -> Result<Outcome, String> {
    run(size(large))
}

/// The CUDA reference's arguments for the same size: points, features, clusters.
pub fn cuda_args(large: bool) -> Vec<String> {
    vec![
        size(large).to_string(),
        NATTRIBUTES.to_string(),
        NCLUSTERS.to_string(),
    ]
}

/// Clusters `npoints` points on the current device, timed and verified.
pub fn run(npoints: usize) -> Result<Outcome, String> {
    if npoints % UNROLLFAC != 0 || npoints < NCLUSTERS {
        return Err(format!(
            "kmeans: {npoints} points: the parallel loop takes {UNROLLFAC} points an iteration, as the original's does, so ask for a multiple of {UNROLLFAC} (and at least {NCLUSTERS})"
        ));
    }
    let feature = input(npoints);
    let mut membership = vec![0i32; npoints];
    let t = Instant::now();
    let (clusters, passes) = kmeans_clustering(
        &feature,
        NATTRIBUTES,
        npoints,
        NCLUSTERS,
        THRESHOLD,
        &mut membership,
    );
    let time = t.elapsed();
    let (want_clusters, want_membership) =
        crate::plain_result("kmeans", npoints, || plain(&feature, npoints));
    if let Some(i) = (0..npoints).find(|&i| membership[i] != want_membership[i]) {
        return Err(format!(
            "kmeans membership[{i}] = {}, the plain loops give {}",
            membership[i], want_membership[i]
        ));
    }
    // The sums are exact in any order (see the module's notes), so the centres are the same
    // bits as the plain loops'.
    let got: Vec<f64> = clusters.iter().map(|&c| c as f64).collect();
    let want: Vec<f64> = want_clusters.iter().map(|&c| c as f64).collect();
    let worst = compare("kmeans centres", &got, &want, 0.0)?;
    Ok(Outcome {
        time,
        checksum: got.iter().sum(),
        verified: format!(
            "{passes} passes; memberships equal to the plain loops', centres within {worst:.1e}"
        ),
    })
}
