//! Routines as methods and in modules (3.3 section 2.15): calls from regions through paths,
//! `Self::` and `self.`.

use crate::devices::on_each_device;

mod kernels_lib {
    #[acc::routine(seq)]
    pub fn smooth(a: f64, b: f64, c: f64) -> f64 {
        0.25 * a + 0.5 * b + 0.25 * c
    }
}

struct Rod {
    t: Vec<f64>,
    k: f64,
}

impl Rod {
    #[acc::routine(seq)]
    fn conduct(&self, x: f64) -> f64 {
        self.k * x
    }

    #[acc::routine(seq)]
    fn clamp01(x: f64) -> f64 {
        x.clamp(0.0, 1.0)
    }

    #[acc::offload]
    fn step(&mut self) -> Vec<f64> {
        let n = self.t.len();
        let mut out = vec![0.0; n];
        #[acc::parallel_loop(copyout(out))]
        for i in 1..n - 1 {
            let s = kernels_lib::smooth(self.t[i - 1], self.t[i], self.t[i + 1]);
            out[i] = Self::clamp01(self.conduct(s));
        }
        out
    }
}

#[test]
fn routines_through_paths_self_and_methods() {
    on_each_device(|_| {
        let mut rod = Rod {
            t: (0..100).map(|i| (i % 10) as f64 / 5.0).collect(),
            k: 0.5,
        };
        let out = rod.step();
        for i in 1..99 {
            let s = 0.25 * rod.t[i - 1] + 0.5 * rod.t[i] + 0.25 * rod.t[i + 1];
            assert_eq!(out[i], (0.5 * s).clamp(0.0, 1.0), "{i}");
        }
    });
}

/// A routine taking `&mut self` writes elements of `self`'s arrays (3.3 section 2.15): the
/// fields it writes travel as written arrays, the ones it reads as read ones.
struct Heat {
    t: Vec<f64>,
    flux: Vec<f64>,
    hits: Vec<u32>,
    k: f64,
}

impl Heat {
    #[acc::routine(seq)]
    fn conduct(&mut self, i: usize) -> f64 {
        let f = self.k * (self.t[i + 1] - self.t[i]);
        self.flux[i] = f;
        self.hits[i] += 1;
        f
    }

    #[acc::offload]
    fn step(&mut self) -> f64 {
        let n = self.t.len();
        let mut total = 0.0;
        #[acc::parallel_loop(reduction(+: total))]
        for i in 0..n - 1 {
            total += self.conduct(i);
        }
        #[acc::parallel_loop]
        for i in 0..n - 1 {
            self.conduct(i);
        }
        total
    }
}

#[test]
fn mut_self_routines_write_the_arrays_of_self() {
    on_each_device(|ty| {
        let n = 1000;
        let t: Vec<f64> = (0..n).map(|i| ((i * 7) % 31) as f64 * 0.5).collect();
        let mut h = Heat {
            t: t.clone(),
            flux: vec![0.0; n],
            hits: vec![0; n],
            k: 0.25,
        };
        let total = h.step();
        let mut want = 0.0;
        for i in 0..n - 1 {
            let f = 0.25 * (t[i + 1] - t[i]);
            want += f;
            assert_eq!(h.flux[i], f, "{ty}: flux[{i}]");
            assert_eq!(h.hits[i], 2, "{ty}: hits[{i}]");
        }
        assert_eq!(h.hits[n - 1], 0, "{ty}");
        assert_eq!(h.t, t, "{ty}: t is only read");
        assert!((total - want).abs() < 1e-9, "{ty}: {total} vs {want}");
    });
}
