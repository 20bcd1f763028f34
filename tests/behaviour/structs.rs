//! Arrays of `#[derive(acc::DeviceCopy)]` structs in compute regions (docs/guide/regions.md): fields
//! read, written and updated atomically element by element, in data regions and as routine
//! arguments. Structs travel bit for bit (3.3 section 2.6: a `copy` of the array copies its
//! elements' bytes), so fields a region does not touch come back unchanged.

use crate::devices::on_each_device;

#[derive(Clone, Copy, Debug, Default, PartialEq, acc::DeviceCopy)]
#[repr(C)]
struct Cell {
    a: f32,
    b: i32,
    c: u32,
    d: f64,
    e: i64,
    f: u64,
}

#[acc::parallel_loop(copy(cells))]
fn mix(cells: &mut [Cell], k: f64) {
    for i in 0..cells.len() {
        let x = cells[i].d * k + cells[i].a as f64;
        cells[i].a = cells[i].b as f32 * 0.5;
        cells[i].b = -(cells[i].c as i32);
        cells[i].d = x;
        cells[i].e -= cells[i].f as i64;
        cells[i].f = cells[i].f.wrapping_mul(3);
    }
}

fn cells(n: usize) -> Vec<Cell> {
    (0..n)
        .map(|i| Cell {
            a: i as f32,
            b: i as i32 * 3,
            c: i as u32 + 7,
            d: i as f64 / 4.0,
            e: 1 << 40,
            f: i as u64 + (1 << 33),
        })
        .collect()
}

#[test]
fn fields_of_every_32_and_64_bit_type() {
    on_each_device(|ty| {
        let mut got = cells(5000);
        mix(&mut got, 2.0);
        let mut want = cells(5000);
        for w in &mut want {
            let x = w.d * 2.0 + w.a as f64;
            w.a = w.b as f32 * 0.5;
            w.b = -(w.c as i32);
            w.d = x;
            w.e -= w.f as i64;
            w.f = w.f.wrapping_mul(3);
        }
        assert_eq!(got, want, "on {ty}");
    });
}

#[derive(Clone, Copy, Debug, PartialEq, acc::DeviceCopy)]
#[repr(C)]
struct Body {
    /// Not a scalar: kernels cannot access it, but it travels with the element.
    spare: [f32; 2],
    x: f64,
    v: f64,
    mass: f32,
    alive: u32,
}

/// Fields updated in place by two regions inside a data region: the array stays present
/// between them, and the host sees the result at the region's end (3.3 section 2.6.5).
#[acc::offload]
fn simulate(bodies: &mut Vec<Body>, steps: usize, dt: f64) -> f64 {
    let n = bodies.len();
    let mut energy = 0.0;
    #[acc::data(copy(bodies))]
    {
        for _ in 0..steps {
            #[acc::parallel_loop(present(bodies))]
            for i in 0..n {
                if bodies[i].alive != 0 {
                    bodies[i].x += bodies[i].v * dt;
                }
            }
            #[acc::parallel_loop(present(bodies))]
            for i in 0..n {
                if bodies[i].x > 100.0 {
                    bodies[i].alive = 0;
                }
            }
        }
        #[acc::parallel_loop(present(bodies), reduction(+: energy))]
        for i in 0..n {
            energy += 0.5 * bodies[i].mass as f64 * bodies[i].v * bodies[i].v;
        }
    }
    energy
}

#[test]
fn fields_updated_in_place_in_a_data_region() {
    on_each_device(|ty| {
        let start: Vec<Body> = (0..3000)
            .map(|i| Body {
                spare: [i as f32, -1.0],
                x: (i % 100) as f64,
                v: (i % 7) as f64,
                mass: 2.0,
                alive: 1,
            })
            .collect();
        let mut got = start.clone();
        let e = simulate(&mut got, 10, 1.0);
        let mut want = start.clone();
        for _ in 0..10 {
            for b in &mut want {
                if b.alive != 0 {
                    b.x += b.v;
                }
            }
            for b in &mut want {
                if b.x > 100.0 {
                    b.alive = 0;
                }
            }
        }
        assert_eq!(got, want, "on {ty}");
        let we: f64 = want.iter().map(|b| 0.5 * b.mass as f64 * b.v * b.v).sum();
        assert!((e - we).abs() <= 1e-9 * we, "{e} vs {we} on {ty}");
    });
}

#[derive(Clone, Copy, Debug, Default, PartialEq, acc::DeviceCopy)]
#[repr(C)]
struct Bin {
    count: u32,
    total: f32,
}

/// Atomic updates of struct fields (3.3 section 2.12): a histogram whose bins count and sum.
#[acc::parallel_loop(copyin(x), copy(bins))]
fn histogram(x: &[f32], bins: &mut [Bin]) {
    for i in 0..x.len() {
        let b = (x[i] as usize) % bins.len();
        #[acc::atomic(update)]
        bins[b].count += 1;
        #[acc::atomic(update)]
        bins[b].total += 1.0;
    }
}

#[test]
fn atomic_updates_of_fields() {
    on_each_device(|ty| {
        let x: Vec<f32> = (0..20_000).map(|i| ((i * 7) % 64) as f32).collect();
        let mut bins = vec![Bin::default(); 16];
        histogram(&x, &mut bins);
        let mut want = vec![Bin::default(); 16];
        for &v in &x {
            want[v as usize % 16].count += 1;
            want[v as usize % 16].total += 1.0;
        }
        assert_eq!(bins, want, "on {ty}");
    });
}

#[derive(Clone, Copy, Debug, PartialEq, acc::DeviceCopy)]
#[repr(C)]
struct Complex(f64, f64);

#[acc::routine(seq)]
fn norm2(z: &[Complex], i: usize) -> f64 {
    z[i].0 * z[i].0 + z[i].1 * z[i].1
}

/// Tuple structs (fields `.0`, `.1`), passed to a routine as a slice.
#[acc::parallel_loop(copyin(z), copyout(out))]
fn norms(z: &[Complex], out: &mut [f64]) {
    for i in 0..z.len() {
        out[i] = norm2(z, i);
    }
}

#[test]
fn tuple_struct_fields_and_routine_slices() {
    on_each_device(|ty| {
        let z: Vec<Complex> = (0..1000)
            .map(|i| Complex(i as f64, -(i as f64) / 2.0))
            .collect();
        let mut out = vec![0.0; 1000];
        norms(&z, &mut out);
        for i in 0..1000 {
            assert_eq!(out[i], z[i].0 * z[i].0 + z[i].1 * z[i].1, "{i} on {ty}");
        }
    });
}

#[derive(Clone, Copy, Debug, PartialEq, acc::DeviceCopy)]
#[repr(C)]
struct Tagged {
    value: f64,
    tag: u8,
    flag: bool,
    id: usize,
}

#[acc::parallel_loop(copy(t))]
fn retag(t: &mut [Tagged]) {
    for i in 0..t.len() {
        if t[i].flag {
            t[i].tag = t[i].tag.wrapping_add(1);
            t[i].id += 1;
        }
        t[i].flag = !t[i].flag;
    }
}

/// Fields of the narrow types share 4-byte words with their neighbours in the host's layout;
/// every device reads and writes them in place (wgpu as bits of their word).
#[test]
fn narrow_and_usize_fields() {
    on_each_device(|ty| {
        let mut t: Vec<Tagged> = (0..500)
            .map(|i| Tagged {
                value: i as f64,
                tag: (i % 256) as u8,
                flag: i % 3 == 0,
                id: i,
            })
            .collect();
        let mut want = t.clone();
        retag(&mut t);
        for w in &mut want {
            if w.flag {
                w.tag = w.tag.wrapping_add(1);
                w.id += 1;
            }
            w.flag = !w.flag;
        }
        assert_eq!(t, want, "on {ty}");
    });
}

#[derive(Clone, Copy, Debug, PartialEq, acc::DeviceCopy)]
#[repr(C)]
struct Span {
    start: usize,
    offset: isize,
    weight: f32,
}

#[acc::parallel_loop(copy(spans))]
fn shift_spans(spans: &mut [Span], by: usize) {
    for i in 0..spans.len() {
        spans[i].start += by;
        spans[i].offset = -spans[i].offset - 1;
        spans[i].weight *= 2.0;
    }
}

/// `usize` and `isize` fields keep their 64 bits on every device, beyond 32-bit values too.
#[test]
fn index_sized_fields() {
    on_each_device(|ty| {
        let mut s: Vec<Span> = (0..700)
            .map(|i| Span {
                start: i << 35,
                offset: i as isize * 1_000_000_000_000,
                weight: i as f32,
            })
            .collect();
        let want: Vec<Span> = s
            .iter()
            .map(|x| Span {
                start: x.start + (3 << 40),
                offset: -x.offset - 1,
                weight: x.weight * 2.0,
            })
            .collect();
        shift_spans(&mut s, 3 << 40);
        assert_eq!(s, want, "on {ty}");
    });
}

#[derive(Clone, Copy, Debug, PartialEq, acc::DeviceCopy)]
#[repr(C)]
struct Bins {
    low: u8,
    high: i8,
    wide: u16,
    seen: bool,
    count: i16,
}

#[acc::parallel_loop(copyin(x), copy(bins))]
fn bin_bytes(x: &[u32], bins: &mut [Bins]) {
    for i in 0..x.len() {
        let b = (x[i] % 8) as usize;
        #[acc::atomic(update)]
        bins[b].count += 1;
        #[acc::atomic(write)]
        bins[b].seen = true;
    }
}

/// Atomics on narrow fields: every iteration updates one of few elements, whose narrow fields
/// share a word (compare-exchange on the word on wgpu), and the neighbouring fields keep their
/// values.
#[test]
fn atomics_on_narrow_fields() {
    on_each_device(|ty| {
        let x: Vec<u32> = (0..5000).map(|i| i * 7 + 3).collect();
        let mut bins: Vec<Bins> = (0..8)
            .map(|b| Bins {
                low: b as u8 * 30,
                high: -(b as i8),
                wide: 60_000 - b as u16,
                seen: false,
                count: -5,
            })
            .collect();
        bin_bytes(&x, &mut bins);
        for (b, got) in bins.iter().enumerate() {
            let n = x.iter().filter(|&&v| (v % 8) as usize == b).count() as i16;
            let want = Bins {
                low: b as u8 * 30,
                high: -(b as i8),
                wide: 60_000 - b as u16,
                seen: n > 0,
                count: n - 5,
            };
            assert_eq!(*got, want, "bin {b} on {ty}");
        }
    });
}

// Values of `DeviceCopy` structs in kernels: `let p = ps[i]; p.x + p.m`, fields of the value
// written, the value stored into another element (`out[i] = p`).

#[derive(Clone, Copy, Debug, Default, PartialEq, acc::DeviceCopy)]
#[repr(C)]
struct Particle {
    x: f64,
    v: f64,
    m: f32,
    id: u32,
}

#[acc::offload]
fn advance(ps: &[Particle], out: &mut [Particle], dt: f64) -> Vec<f64> {
    let mut energy = vec![0.0; ps.len()];
    #[acc::parallel_loop(copyin(ps), copyout(out, energy))]
    for i in 0..ps.len() {
        let mut p = ps[i];
        p.x += p.v * dt;
        p.id = p.id * 2 + 1;
        energy[i] = 0.5 * p.m as f64 * p.v * p.v;
        out[i] = p;
    }
    energy
}

#[test]
fn struct_values_in_kernels() {
    let ps: Vec<Particle> = (0..1000)
        .map(|i| Particle {
            x: i as f64,
            v: (i % 7) as f64 - 3.0,
            m: 1.0 + (i % 3) as f32,
            id: i,
        })
        .collect();
    on_each_device(|ty| {
        let mut out = vec![Particle::default(); ps.len()];
        let energy = advance(&ps, &mut out, 0.5);
        for (i, p) in ps.iter().enumerate() {
            let want = Particle {
                x: p.x + p.v * 0.5,
                v: p.v,
                m: p.m,
                id: p.id * 2 + 1,
            };
            assert_eq!(out[i], want, "particle {i} on {ty}");
            assert_eq!(energy[i], 0.5 * p.m as f64 * p.v * p.v, "on {ty}");
        }
    });
}

// A struct value passed to a routine by value: the routine reads and changes its own copy;
// the caller's value is unchanged.

#[acc::routine(seq)]
fn kinetic(p: Particle, dt: f64) -> f64 {
    let mut q = p;
    q.v += dt;
    0.5 * q.m as f64 * q.v * q.v
}

#[acc::routine(seq)]
fn drifted(mut p: Particle, dt: f64) -> f64 {
    p.x += p.v * dt;
    p.x
}

#[acc::offload]
fn struct_values_to_routines(ps: &[Particle], dt: f64) -> (Vec<f64>, Vec<f64>) {
    let mut energy = vec![0.0; ps.len()];
    let mut x = vec![0.0; ps.len()];
    #[acc::parallel_loop(copyin(ps), copyout(energy, x))]
    for i in 0..ps.len() {
        let p = ps[i];
        energy[i] = kinetic(p, dt);
        x[i] = drifted(p, dt) + p.x;
    }
    (energy, x)
}

#[test]
fn struct_values_passed_to_routines() {
    let ps: Vec<Particle> = (0..700)
        .map(|i| Particle {
            x: i as f64 * 0.25,
            v: (i % 5) as f64 - 2.0,
            m: 1.0 + (i % 4) as f32,
            id: i,
        })
        .collect();
    on_each_device(|ty| {
        let (energy, x) = struct_values_to_routines(&ps, 0.5);
        for (i, p) in ps.iter().enumerate() {
            let v = p.v + 0.5;
            assert_eq!(energy[i], 0.5 * p.m as f64 * v * v, "particle {i} on {ty}");
            assert_eq!(x[i], (p.x + p.v * 0.5) + p.x, "particle {i} on {ty}");
        }
    });
}

// Struct elements copied whole, with no field touched: `b[i] = a[i]` and `let p = a[i];
// b[i] = p;` (issue 40, item 10: refused as "an element of `a` as a whole"). Scalars copied
// the same ways stay scalar copies.

#[acc::offload]
fn copy_whole(a: &[Particle], b: &mut [Particle], c: &mut [Particle], x: &[f64], y: &mut [f64]) {
    #[acc::parallel_loop(copyin(a, x), copyout(b, c, y))]
    for i in 0..a.len() {
        b[i] = a[a.len() - 1 - i];
        let p = a[i];
        c[i] = p;
        let v = x[i];
        y[i] = v;
    }
}

#[test]
fn struct_elements_copied_whole() {
    let a: Vec<Particle> = (0..300)
        .map(|i| Particle {
            x: i as f64 * 0.5,
            v: -(i as f64),
            m: i as f32 + 0.25,
            id: 7 * i,
        })
        .collect();
    let x: Vec<f64> = (0..300).map(|i| i as f64 / 3.0).collect();
    on_each_device(|ty| {
        let mut b = vec![Particle::default(); a.len()];
        let mut c = vec![Particle::default(); a.len()];
        let mut y = vec![0.0; a.len()];
        copy_whole(&a, &mut b, &mut c, &x, &mut y);
        let rev: Vec<Particle> = a.iter().rev().copied().collect();
        assert_eq!(b, rev, "on {ty}");
        assert_eq!(c, a, "on {ty}");
        assert_eq!(y, x, "on {ty}");
    });
}

// Private arrays of structs and struct literals in regions (issue 40, item 11): one private
// array per field on the GPUs.

#[derive(Clone, Copy, Debug, Default, PartialEq, acc::DeviceCopy)]
#[repr(C)]
struct Pair {
    a: f64,
    b: i32,
}

#[acc::offload]
fn private_structs(x: &[f64], out: &mut [f64], last: &mut [Pair]) {
    #[acc::parallel_loop(copyin(x), copyout(out, last))]
    for i in 0..x.len() {
        let mut ps = [Pair { a: 0.0, b: -1 }; 6];
        for k in 0..ps.len() {
            ps[k].a = x[i] * k as f64;
            ps[k].b += k as i32;
        }
        ps[1].a += 0.5;
        let q = Pair {
            a: ps[2].a + 1.0,
            b: 7,
        };
        ps[0] = q;
        let r = ps[5];
        out[i] = ps[0].a + ps[1].a + ps[3].b as f64 + r.a;
        last[i] = r;
    }
}

#[test]
fn private_arrays_of_structs_and_struct_literals() {
    let x: Vec<f64> = (0..500).map(|i| i as f64 * 0.25).collect();
    on_each_device(|ty| {
        let mut out = vec![0.0; x.len()];
        let mut last = vec![Pair::default(); x.len()];
        private_structs(&x, &mut out, &mut last);
        for (i, &v) in x.iter().enumerate() {
            let want = (v * 2.0 + 1.0) + (v * 1.0 + 0.5) + 2.0 + v * 5.0;
            assert_eq!(out[i], want, "element {i} on {ty}");
            assert_eq!(last[i], Pair { a: v * 5.0, b: 4 }, "element {i} on {ty}");
        }
    });
}
