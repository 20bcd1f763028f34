//! Arrays inside struct elements: Rodinia lavaMD's neighbour lists (`boxes[l].nei[k].number`,
//! an array of structs in each box) and a particle's coordinates (`p[i].pos[d]`, an array of
//! scalars), read and written in kernels with both indices checked.

use crate::devices::on_each_device;

/// lavaMD's `nei_str`.
#[derive(Clone, Copy, Debug, Default, PartialEq, acc::DeviceCopy)]
#[repr(C)]
struct Nei {
    x: i32,
    y: i32,
    z: i32,
    number: i32,
    offset: i64,
}

/// lavaMD's `box_str`: the box, its first particle, and its neighbours.
#[derive(Clone, Copy, Debug, Default, PartialEq, acc::DeviceCopy)]
#[repr(C)]
struct BoxStr {
    x: i32,
    y: i32,
    z: i32,
    number: i32,
    offset: i64,
    nn: i32,
    nei: [Nei; 26],
}

/// A particle with its position and velocity as arrays.
#[derive(Clone, Copy, Debug, Default, PartialEq, acc::DeviceCopy)]
#[repr(C)]
struct Particle {
    pos: [f64; 3],
    vel: [f32; 3],
    id: u32,
}

/// The boxes of a `b`³ grid, each with its neighbours inside the grid (lavaMD's setup).
fn boxes(b: i32, per_box: i64) -> Vec<BoxStr> {
    let mut out = Vec::new();
    for z in 0..b {
        for y in 0..b {
            for x in 0..b {
                let number = (z * b + y) * b + x;
                let mut bx = BoxStr {
                    x,
                    y,
                    z,
                    number,
                    offset: number as i64 * per_box,
                    ..Default::default()
                };
                for (dz, dy, dx) in (-1..=1).flat_map(|dz| {
                    (-1..=1).flat_map(move |dy| (-1..=1).map(move |dx| (dz, dy, dx)))
                }) {
                    let (nx, ny, nz) = (x + dx, y + dy, z + dz);
                    if (dx, dy, dz) == (0, 0, 0)
                        || !(0..b).contains(&nx)
                        || !(0..b).contains(&ny)
                        || !(0..b).contains(&nz)
                    {
                        continue;
                    }
                    let n = (nz * b + ny) * b + nx;
                    bx.nei[bx.nn as usize] = Nei {
                        x: nx,
                        y: ny,
                        z: nz,
                        number: n,
                        offset: n as i64 * per_box,
                    };
                    bx.nn += 1;
                }
                out.push(bx);
            }
        }
    }
    out
}

/// lavaMD's outer loops: for each box, over itself and its neighbours, the particles' charge
/// summed (the neighbour's box found through `boxes[l].nei[k - 1].number`, its particles
/// through that box's `offset`), and each box's neighbour count written back into a field
/// of its last neighbour slot.
#[acc::offload]
fn neighbour_sums(bs: &mut [BoxStr], qv: &[f64], per_box: usize) -> Vec<f64> {
    let mut sums = vec![0.0f64; bs.len()];
    #[acc::parallel_loop(copy(bs), copyin(qv), copyout(sums))]
    for l in 0..bs.len() {
        let mut s = 0.0;
        for k in 0..(1 + bs[l].nn as usize) {
            let pointer = if k == 0 {
                l
            } else {
                bs[l].nei[k - 1].number as usize
            };
            let first = bs[pointer].offset as usize;
            for j in 0..per_box {
                s += qv[first + j];
            }
        }
        sums[l] = s;
        bs[l].nei[25].z = bs[l].nn * 10;
        bs[l].nei[25].offset = -(bs[l].nei[0].offset);
    }
    sums
}

/// Positions advanced by velocities, coordinate by coordinate (`p[i].pos[d]`).
#[acc::offload]
fn advance(ps: &mut [Particle], dt: f64) -> Vec<f64> {
    let mut r2 = vec![0.0f64; ps.len()];
    #[acc::parallel_loop(copy(ps), copyout(r2))]
    for i in 0..ps.len() {
        let mut s = 0.0;
        for d in 0..3 {
            ps[i].pos[d] += ps[i].vel[d] as f64 * dt;
            s += ps[i].pos[d] * ps[i].pos[d];
        }
        ps[i].vel[2] = -ps[i].vel[2];
        r2[i] = s;
    }
    r2
}

#[test]
fn lavamd_neighbour_lists_inside_box_elements() {
    let (b, per_box) = (4, 5usize);
    let qv: Vec<f64> = (0..(b * b * b) as usize * per_box)
        .map(|i| (i % 17) as f64 * 0.5)
        .collect();
    let original = boxes(b, per_box as i64);
    let mut want_boxes = original.clone();
    let want: Vec<f64> = want_boxes
        .iter_mut()
        .map(|bx| {
            let mut s: f64 = (0..per_box).map(|j| qv[bx.offset as usize + j]).sum();
            for k in 0..bx.nn as usize {
                let first = bx.nei[k].offset as usize;
                s += (0..per_box).map(|j| qv[first + j]).sum::<f64>();
            }
            bx.nei[25].z = bx.nn * 10;
            bx.nei[25].offset = -bx.nei[0].offset;
            s
        })
        .collect();
    on_each_device(|ty| {
        let mut bs = original.clone();
        let sums = neighbour_sums(&mut bs, &qv, per_box);
        assert_eq!(sums, want, "sums on {ty}");
        assert_eq!(bs, want_boxes, "boxes written back on {ty}");
    });
}

#[test]
fn particle_coordinates_as_array_fields() {
    let original: Vec<Particle> = (0..1000)
        .map(|i| Particle {
            pos: [i as f64, -(i as f64) * 0.5, 2.0],
            vel: [1.0, 0.25 * (i % 4) as f32, -2.0],
            id: i,
        })
        .collect();
    let dt = 0.5;
    on_each_device(|ty| {
        let mut ps = original.clone();
        let r2 = advance(&mut ps, dt);
        for (i, (p, o)) in ps.iter().zip(&original).enumerate() {
            let mut want = *o;
            for d in 0..3 {
                want.pos[d] += o.vel[d] as f64 * dt;
            }
            want.vel[2] = -o.vel[2];
            assert_eq!(*p, want, "particle {i} on {ty}");
            let s: f64 = want.pos.iter().map(|x| x * x).sum();
            assert_eq!(r2[i], s, "r2[{i}] on {ty}");
        }
    });
}

#[acc::offload]
fn nth_neighbour(bs: &[BoxStr], k: usize) -> Vec<i32> {
    let mut out = vec![0; bs.len()];
    #[acc::parallel_loop(copyin(bs), copyout(out))]
    for l in 0..bs.len() {
        out[l] = bs[l].nei[k].number;
    }
    out
}

#[acc::offload]
fn mark_nth_neighbour(bs: &mut [BoxStr], k: usize) {
    #[acc::parallel_loop(copy(bs))]
    for l in 0..bs.len() {
        bs[l].nei[k].x = -1;
    }
}

fn panic_message(f: impl FnOnce()) -> String {
    let err = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_err();
    err.downcast_ref::<String>()
        .cloned()
        .or_else(|| err.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

/// An index past an array field's length stops the call with Rust's message, reading or
/// writing, on every device.
#[test]
fn nested_indices_out_of_range_panic() {
    let original = boxes(3, 2);
    on_each_device(|ty| {
        let firsts = nth_neighbour(&original, 0);
        assert!(
            firsts
                .iter()
                .zip(&original)
                .all(|(n, b)| *n == b.nei[0].number),
            "on {ty}"
        );
        for msg in [
            panic_message(|| {
                nth_neighbour(&original, 26);
            }),
            panic_message(|| mark_nth_neighbour(&mut original.clone(), 26)),
        ] {
            assert!(
                msg.contains("index out of bounds: the len is 26 but the index is 26"),
                "on {ty}: {msg}"
            );
        }
    });
}

/// Boxes copied whole (`b[i] = a[i]`, and through a value `let p = a[i]; b[i] = p;`): their
/// neighbour lists with them.
#[acc::offload]
fn copied_boxes(bs: &[BoxStr]) -> (Vec<BoxStr>, Vec<BoxStr>) {
    let mut direct = vec![BoxStr::default(); bs.len()];
    let mut through = vec![BoxStr::default(); bs.len()];
    #[acc::parallel_loop(copyin(bs), copyout(direct, through))]
    for l in 0..bs.len() {
        direct[l] = bs[l];
        let p = bs[bs.len() - 1 - l];
        through[l] = p;
    }
    (direct, through)
}

#[test]
fn struct_elements_with_array_fields_copied_whole() {
    let original = boxes(3, 4);
    let reversed: Vec<BoxStr> = original.iter().rev().copied().collect();
    on_each_device(|ty| {
        let (direct, through) = copied_boxes(&original);
        assert_eq!(direct, original, "b[i] = a[i] on {ty}");
        assert_eq!(through, reversed, "through a value on {ty}");
    });
}
