//! `ndarray` arrays (feature `ndarray`, issue 18 item 6): `Array1/2/3`, views and mutable
//! views in standard layout in data clauses and regions, indexed `a[[i, j]]` / `a[(i, j)]`,
//! with `nrows()`, `ncols()`, `dim()`, `shape()[k]`, `len_of(Axis(k))` and `len()`, on every
//! device with the host's results; strided views refused by name; an index past its axis
//! stopped as ndarray's indexing stops it.

use acc::ndarray::{s, Array1, Array2, Array3, ArrayView2, ArrayViewMut2, Axis};

use crate::devices::{on_each_device, panic_message};

#[acc::parallel_loop(copyin(a, b), copyout(c), collapse(2))]
fn matmul(a: &Array2<f64>, b: &Array2<f64>, c: &mut Array2<f64>) {
    for i in 0..c.nrows() {
        for j in 0..c.ncols() {
            let mut s = 0.0;
            for k in 0..a.ncols() {
                s += a[[i, k]] * b[[k, j]];
            }
            c[[i, j]] = s;
        }
    }
}

fn filled(rows: usize, cols: usize, seed: usize) -> Array2<f64> {
    Array2::from_shape_fn((rows, cols), |(i, j)| {
        ((i * 7 + j * 3 + seed) % 11) as f64 - 5.0
    })
}

#[test]
fn a_matrix_product_of_array2s_matches_the_host() {
    let (a, b) = (filled(37, 23, 1), filled(23, 41, 2));
    let want = a.dot(&b);
    on_each_device(|ty| {
        let mut c = Array2::zeros((37, 41));
        matmul(&a, &b, &mut c);
        assert_eq!(c, want, "on {ty}");
    });
}

/// Tuple indices, `dim()` destructured, `shape()` and `len_of`, a 3-D array and a 1-D one
/// indexed both ways.
#[acc::parallel_loop(copyin(u, w), copyout(out), collapse(2))]
fn smooth(u: &Array3<f32>, w: &Array1<f32>, out: &mut Array3<f32>) {
    for i in 1..u.shape()[0] - 1 {
        for j in 1..u.len_of(Axis(1)) - 1 {
            let (_, _, nz) = u.dim();
            for k in 0..nz {
                out[(i, j, k)] = w[0] * u[(i - 1, j, k)]
                    + w[[1]] * u[[i, j, k]]
                    + w[2] * u[(i + 1, j + 1, k)]
                    + (u.len() % 7) as f32;
            }
        }
    }
}

#[test]
fn three_dimensional_arrays_with_tuple_indices_and_lengths() {
    let u = Array3::from_shape_fn((9, 8, 5), |(i, j, k)| (i * 40 + j * 5 + k) as f32 * 0.25);
    let w = Array1::from(vec![0.5f32, 2.0, -1.0]);
    let mut want = Array3::zeros(u.dim());
    for i in 1..8 {
        for j in 1..7 {
            for k in 0..5 {
                want[(i, j, k)] = w[0] * u[(i - 1, j, k)]
                    + w[1] * u[(i, j, k)]
                    + w[2] * u[(i + 1, j + 1, k)]
                    + (u.len() % 7) as f32;
            }
        }
    }
    on_each_device(|ty| {
        let mut out = Array3::zeros(u.dim());
        smooth(&u, &w, &mut out);
        assert_eq!(out, want, "on {ty}");
    });
}

/// A data region over an `Array2` and views of it: the regions find it present through a
/// mutable view and a read-only view of the same elements, and only the data region's end
/// brings it back.
#[acc::offload]
fn relax(grid: &mut Array2<f32>, steps: usize) -> f32 {
    let mut top = 0.0f32;
    #[acc::data(copy(grid))]
    {
        for _ in 0..steps {
            let mut v: ArrayViewMut2<f32> = grid.view_mut();
            #[acc::parallel_loop(present(v))]
            for i in 0..v.nrows() {
                for j in 0..v.ncols() {
                    v[[i, j]] = v[[i, j]] * 0.5 + (i + j) as f32;
                }
            }
        }
        let r: ArrayView2<f32> = grid.view();
        #[acc::parallel_loop(present(r), reduction(max: top))]
        for i in 0..r.nrows() {
            for j in 0..r.ncols() {
                top = top.max(r[[i, j]]);
            }
        }
    }
    top
}

#[test]
fn data_regions_keep_arrays_and_their_views_present() {
    let start = Array2::from_shape_fn((20, 30), |(i, j)| (i * 30 + j) as f32);
    let mut want = start.clone();
    for _ in 0..4 {
        for ((i, j), x) in want.indexed_iter_mut() {
            *x = *x * 0.5 + (i + j) as f32;
        }
    }
    let want_top = want.iter().copied().fold(f32::MIN, f32::max);
    on_each_device(|ty| {
        let mut g = start.clone();
        let top = relax(&mut g, 4);
        assert_eq!(g, want, "on {ty}");
        assert_eq!(top, want_top, "on {ty}");
    });
}

/// Rows of a matrix as a view in standard layout: a block of rows travels as its elements.
#[acc::parallel_loop(copy(rows))]
fn scale_rows(rows: &mut ArrayViewMut2<f64>, by: f64) {
    for i in 0..rows.nrows() {
        for j in 0..rows.ncols() {
            rows[[i, j]] *= by;
        }
    }
}

#[test]
fn a_view_of_whole_rows_travels_and_a_strided_view_is_refused_by_name() {
    on_each_device(|ty| {
        let mut m = filled(10, 6, 3);
        let mut want = m.clone();
        want.slice_mut(s![2..5, ..]).mapv_inplace(|x| x * 3.0);
        scale_rows(&mut m.slice_mut(s![2..5, ..]), 3.0);
        assert_eq!(m, want, "on {ty}");

        // Every other column: not one host range.
        let err = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            scale_rows(&mut m.slice_mut(s![.., ..;2]), 2.0)
        }))
        .unwrap_err();
        let msg = panic_message(&*err);
        assert!(
            msg.contains("`rows`")
                && msg.contains("standard")
                && msg.contains("as_standard_layout"),
            "on {ty}: {msg}"
        );
        assert_eq!(m, want, "on {ty}: a refused region changes nothing");
    });
}

#[acc::parallel_loop(copyin(a), copyout(b))]
fn shifted_columns(a: &Array2<i32>, b: &mut Array1<i32>, shift: usize) {
    for i in 0..a.nrows() {
        b[i] = a[[i, shift]];
    }
}

#[test]
fn an_index_past_its_axis_stops_the_region_on_every_device() {
    let a = Array2::from_shape_fn((4, 3), |(i, j)| (i * 3 + j) as i32);
    on_each_device(|ty| {
        let mut b = Array1::zeros(4);
        shifted_columns(&a, &mut b, 2);
        assert_eq!(b.to_vec(), vec![2, 5, 8, 11], "on {ty}");
        // Column 3 of a 4 x 3 array: row i + 1's first element in memory, but out of bounds.
        let err = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            shifted_columns(&a, &mut b, 3)
        }))
        .unwrap_err();
        let msg = panic_message(&*err);
        assert!(msg.contains("out of bounds"), "on {ty}: {msg}");
    });
}
