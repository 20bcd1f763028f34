//! `zran3`, MG's initialisation on the host as NPB runs it: `nx^3` random numbers from NPB's
//! generator, the places of the ten largest and ten smallest (`bubble`), and the charges +1 and
//! -1 put there.

use super::*;

/// Candidates kept by `zran3`: the ten largest and the ten smallest.
const MM: usize = 10;

/// Loads +1 at ten randomly chosen points, -1 at ten others, and zero elsewhere (`zran3`):
/// the random numbers, the search and the charges on the host, as in NPB.
#[acc::offload]
#[allow(clippy::too_many_arguments)]
pub(super) fn zran3(
    oz: &mut [f64],
    n1: usize,
    n2: usize,
    n3: usize,
    nx: usize,
    ny: usize,
    g: &Grid,
) {
    let a = 5.0f64.powf(13.0);
    let x = 314159265.0;
    let mut ten = [[0.0f64; 2]; MM];
    let mut j1 = [[0usize; 2]; MM];
    let mut j2 = [[0usize; 2]; MM];
    let mut j3 = [[0usize; 2]; MM];
    let mut jg = [[[0usize; 2]; MM]; 4];

    let a1 = power(a, nx);
    let a2 = power(a, nx * ny);

    zero3(oz, n1, n2, n3);
    let i = g.is1 - 2 + nx * (g.is2 - 2 + ny * (g.is3 - 2));

    let ai = power(a, i);
    let d1 = g.ie1 - g.is1 + 1;
    let e2 = g.ie2 - g.is2 + 2;
    let e3 = g.ie3 - g.is3 + 2;
    let mut x0 = x;
    randlc(&mut x0, ai);

    for i3 in 1..e3 {
        let mut x1 = x0;
        for i2 in 1..e2 {
            let mut xx = x1;
            vranlc(d1, &mut xx, a, &mut oz[i3 * n2 * n1 + i2 * n1 + 1..]);
            randlc(&mut x1, a1);
        }
        randlc(&mut x0, a2);
    }

    // Each processor looks for twenty candidates.
    for i in 0..MM {
        ten[i][1] = 0.0;
        j1[i][1] = 0;
        j2[i][1] = 0;
        j3[i][1] = 0;
        ten[i][0] = 1.0;
        j1[i][0] = 0;
        j2[i][0] = 0;
        j3[i][0] = 0;
    }

    for i3 in 1..n3 - 1 {
        for i2 in 1..n2 - 1 {
            for i1 in 1..n1 - 1 {
                let z = oz[i3 * n2 * n1 + i2 * n1 + i1];
                if z > ten[0][1] {
                    ten[0][1] = z;
                    j1[0][1] = i1;
                    j2[0][1] = i2;
                    j3[0][1] = i3;
                    bubble(&mut ten, &mut j1, &mut j2, &mut j3, MM, 1);
                }
                if z < ten[0][0] {
                    ten[0][0] = z;
                    j1[0][0] = i1;
                    j2[0][0] = i2;
                    j3[0][0] = i3;
                    bubble(&mut ten, &mut j1, &mut j2, &mut j3, MM, 0);
                }
            }
        }
    }

    // Now which of these are globally best?
    let mut i1 = MM as isize - 1;
    let mut i0 = MM as isize - 1;
    for i in (0..MM).rev() {
        if i1 >= 0 && 0.0 < ten[i1 as usize][1] {
            let t = i1 as usize;
            jg[0][i][1] = 0;
            jg[1][i][1] = g.is1 - 2 + j1[t][1];
            jg[2][i][1] = g.is2 - 2 + j2[t][1];
            jg[3][i][1] = g.is3 - 2 + j3[t][1];
            i1 -= 1;
        } else {
            jg[0][i][1] = 0;
            jg[1][i][1] = 0;
            jg[2][i][1] = 0;
            jg[3][i][1] = 0;
        }

        if i0 >= 0 && 1.0 > ten[i0 as usize][0] {
            let t = i0 as usize;
            jg[0][i][0] = 0;
            jg[1][i][0] = g.is1 - 2 + j1[t][0];
            jg[2][i][0] = g.is2 - 2 + j2[t][0];
            jg[3][i][0] = g.is3 - 2 + j3[t][0];
            i0 -= 1;
        } else {
            jg[0][i][0] = 0;
            jg[1][i][0] = 0;
            jg[2][i][0] = 0;
            jg[3][i][0] = 0;
        }
    }
    let m1 = 0;
    let m0 = 0;

    for z in oz[..n3 * n2 * n1].iter_mut() {
        *z = 0.0;
    }

    for i in (m0..MM).rev() {
        let (i3, i2, i1) = (jg[3][i][0], jg[2][i][0], jg[1][i][0]);
        oz[i3 * n2 * n1 + i2 * n1 + i1] = -1.0;
    }
    for i in (m1..MM).rev() {
        let (i3, i2, i1) = (jg[3][i][1], jg[2][i][1], jg[1][i][1]);
        oz[i3 * n2 * n1 + i2 * n1 + i1] = 1.0;
    }
    acc::update!(device(oz[0..n3 * n2 * n1]));

    comm3(oz, n1, n2, n3);
}

/// `a^n` in NPB's generator's arithmetic (`power`).
fn power(a: f64, n: usize) -> f64 {
    let mut power = 1.0;
    let mut nj = n;
    let mut aj = a;
    while nj != 0 {
        if nj % 2 == 1 {
            randlc(&mut power, aj);
        }
        let b = aj;
        randlc(&mut aj, b);
        nj /= 2;
    }
    power
}

/// A bubble sort step in direction `ind` (`bubble`): moves the new first candidate up.
fn bubble(
    ten: &mut [[f64; 2]; MM],
    j1: &mut [[usize; 2]; MM],
    j2: &mut [[usize; 2]; MM],
    j3: &mut [[usize; 2]; MM],
    m: usize,
    ind: usize,
) {
    for i in 0..m - 1 {
        let out_of_order = if ind == 1 {
            ten[i][ind] > ten[i + 1][ind]
        } else {
            ten[i][ind] < ten[i + 1][ind]
        };
        if !out_of_order {
            return;
        }
        let t = ten[i + 1][ind];
        ten[i + 1][ind] = ten[i][ind];
        ten[i][ind] = t;
        for j in [&mut *j1, &mut *j2, &mut *j3] {
            let t = j[i + 1][ind];
            j[i + 1][ind] = j[i][ind];
            j[i][ind] = t;
        }
    }
}
