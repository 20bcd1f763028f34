use std::collections::HashMap;
use std::sync::Mutex;

use super::*;

/// Device memory in host vectors, counting what it is asked to do.
#[derive(Default)]
struct Mock {
    bufs: Mutex<HashMap<BufferId, Vec<u8>>>,
    next: Mutex<BufferId>,
}

impl DeviceMemory for Mock {
    fn alloc(&self, elem: ElemLayout, len: usize) -> Result<BufferId> {
        let mut n = self.next.lock().unwrap();
        *n += 1;
        self.bufs
            .lock()
            .unwrap()
            .insert(*n, vec![0; len * elem.size]);
        Ok(*n)
    }
    fn upload(&self, buf: BufferId, elem: ElemLayout, first: usize, host: &[u8]) -> Result<()> {
        let mut b = self.bufs.lock().unwrap();
        let b = b.get_mut(&buf).unwrap();
        b[first * elem.size..first * elem.size + host.len()].copy_from_slice(host);
        Ok(())
    }
    fn download(
        &self,
        buf: BufferId,
        elem: ElemLayout,
        first: usize,
        host: &mut [u8],
    ) -> Result<()> {
        let b = self.bufs.lock().unwrap();
        let b = &b[&buf];
        host.copy_from_slice(&b[first * elem.size..first * elem.size + host.len()]);
        Ok(())
    }
    fn free(&self, buf: BufferId) {
        self.bufs.lock().unwrap().remove(&buf).expect("freed once");
    }
}

impl Mock {
    fn live(&self) -> usize {
        self.bufs.lock().unwrap().len()
    }
    /// Writes `v` into every element of every buffer: what a kernel would do.
    fn fill(&self, v: u8) {
        for b in self.bufs.lock().unwrap().values_mut() {
            b.fill(v);
        }
    }
}

const U8: ElemLayout = ElemLayout {
    scalar: Some(Scalar::U8),
    size: 1,
};
const F64: ElemLayout = ElemLayout {
    scalar: Some(Scalar::F64),
    size: 8,
};

fn named(name: &str) -> Named<'_> {
    Named {
        name,
        location: Location {
            file: "t.rs",
            line: 1,
            column: 1,
        },
    }
}

fn range(h: &[u8]) -> (usize, usize) {
    (h.as_ptr() as usize, h.len())
}

#[test]
fn copy_copies_in_and_out_once_both_counters_are_zero() {
    let (t, m) = (PresentTable::new(), Mock::default());
    let mut a = vec![1u8; 16];
    assert!(t
        .enter(&m, &a, U8, named("a"), Counter::Structured, Absent::Copyin)
        .unwrap());
    assert_eq!(m.live(), 1);
    // A nested region finds it present: a present increment, no second copy.
    assert!(t
        .enter(&m, &a, U8, named("a"), Counter::Structured, Absent::Copyin)
        .unwrap());
    assert_eq!(
        (m.live(), t.counters(a.as_ptr() as usize)),
        (1, Some((2, 0)))
    );
    m.fill(7);
    let r = range(&a);
    t.exit(
        &m,
        r,
        Some(&mut a),
        named("a"),
        Leave {
            counter: Counter::Structured,
            finalize: false,
            release: Release::Copyout,
        },
    )
    .unwrap();
    assert_eq!(
        a[0], 1,
        "the inner exit leaves the data present, nothing copied out"
    );
    t.exit(
        &m,
        r,
        Some(&mut a),
        named("a"),
        Leave {
            counter: Counter::Structured,
            finalize: false,
            release: Release::Copyout,
        },
    )
    .unwrap();
    assert_eq!((a[0], m.live()), (7, 0));
}

#[test]
fn dynamic_and_structured_counters_keep_data_alive_for_each_other() {
    let (t, m) = (PresentTable::new(), Mock::default());
    let mut a = vec![0u8; 8];
    let r = range(&a);
    t.enter(&m, &a, U8, named("a"), Counter::Dynamic, Absent::Copyin)
        .unwrap();
    t.enter(&m, &a, U8, named("a"), Counter::Structured, Absent::Create)
        .unwrap();
    t.exit(
        &m,
        r,
        Some(&mut a),
        named("a"),
        Leave {
            counter: Counter::Structured,
            finalize: false,
            release: Release::Copyout,
        },
    )
    .unwrap();
    assert!(t.is_present(r.0, r.1), "the dynamic reference keeps it");
    t.enter(&m, &a, U8, named("a"), Counter::Dynamic, Absent::Copyin)
        .unwrap();
    assert_eq!(t.counters(r.0), Some((0, 2)));
    // finalize sets the dynamic counter to zero (3.3 section 2.6.7).
    m.fill(3);
    t.exit(
        &m,
        r,
        Some(&mut a),
        named("a"),
        Leave {
            counter: Counter::Dynamic,
            finalize: true,
            release: Release::Copyout,
        },
    )
    .unwrap();
    assert_eq!((a[7], t.is_present(r.0, r.1), m.live()), (3, false, 0));
    // Leaving again changes nothing: a counter never goes below zero.
    t.exit(
        &m,
        r,
        Some(&mut a),
        named("a"),
        Leave {
            counter: Counter::Dynamic,
            finalize: false,
            release: Release::Copyout,
        },
    )
    .unwrap();
}

#[test]
fn copyin_data_is_freed_without_copying_back() {
    let (t, m) = (PresentTable::new(), Mock::default());
    let mut a = vec![5u8; 4];
    let r = range(&a);
    t.enter(&m, &a, U8, named("a"), Counter::Structured, Absent::Copyin)
        .unwrap();
    m.fill(9);
    t.exit(
        &m,
        r,
        Some(&mut a),
        named("a"),
        Leave {
            counter: Counter::Structured,
            finalize: false,
            release: Release::Delete,
        },
    )
    .unwrap();
    assert_eq!((a, m.live()), (vec![5; 4], 0));
}

#[test]
fn subarrays_of_present_data_share_its_buffer() {
    let (t, m) = (PresentTable::new(), Mock::default());
    let a = [0f64; 10];
    let bytes = unsafe { std::slice::from_raw_parts(a.as_ptr().cast::<u8>(), 80) };
    t.enter(&m, bytes, F64, named("a"), Counter::Dynamic, Absent::Create)
        .unwrap();
    let p = t
        .lookup(bytes[16..].as_ptr() as usize, 24, F64, named("a[2..5]"))
        .unwrap()
        .unwrap();
    assert_eq!((p.first, p.len), (2, 3));
    t.enter(
        &m,
        &bytes[16..40],
        F64,
        named("a[2..5]"),
        Counter::Structured,
        Absent::Copyin,
    )
    .unwrap();
    assert_eq!(
        (m.live(), t.counters(bytes.as_ptr() as usize)),
        (1, Some((1, 1)))
    );
}

#[test]
fn partly_present_and_not_present_are_errors_naming_the_variable() {
    let (t, m) = (PresentTable::new(), Mock::default());
    let a = [0u8; 10];
    t.enter(
        &m,
        &a[2..6],
        U8,
        named("a[2..6]"),
        Counter::Dynamic,
        Absent::Copyin,
    )
    .unwrap();
    let e = t
        .enter(
            &m,
            &a[4..8],
            U8,
            named("a[4..8]"),
            Counter::Structured,
            Absent::Copyin,
        )
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("`a[4..8]` is partly present")
            && e.contains("`a[2..6]`")
            && e.contains("t.rs:1:1"),
        "{e}"
    );
    let e = t
        .enter(
            &m,
            &a[0..4],
            U8,
            named("a[0..4]"),
            Counter::Structured,
            Absent::Copyin,
        )
        .unwrap_err()
        .to_string();
    assert!(e.contains("partly present"), "{e}");
    let e = t
        .enter(
            &m,
            &a[7..9],
            U8,
            named("b"),
            Counter::Structured,
            Absent::Error,
        )
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("`b` is not present") && e.contains("t.rs:1:1"),
        "{e}"
    );
    // no_create of absent data counts nothing.
    assert!(!t
        .enter(
            &m,
            &a[7..9],
            U8,
            named("b"),
            Counter::Structured,
            Absent::Nothing
        )
        .unwrap());
    let e = t
        .update(&m, HostBytes::Read(&a[7..9]), U8, named("b"), false)
        .unwrap_err()
        .to_string();
    assert!(e.contains("not present"), "{e}");
    t.update(&m, HostBytes::Read(&a[7..9]), U8, named("b"), true)
        .unwrap();
}

#[test]
fn update_moves_data_both_ways() {
    let (t, m) = (PresentTable::new(), Mock::default());
    let mut a = vec![1u8, 2, 3, 4];
    t.enter(&m, &a, U8, named("a"), Counter::Dynamic, Absent::Copyin)
        .unwrap();
    a[1] = 20;
    t.update(&m, HostBytes::Read(&a[1..2]), U8, named("a[1..2]"), false)
        .unwrap();
    a[1] = 0;
    a[3] = 0;
    t.update(&m, HostBytes::Write(&mut a[..]), U8, named("a"), false)
        .unwrap();
    assert_eq!(a, vec![1, 20, 3, 4]);
}

#[test]
fn the_same_memory_as_another_type_is_refused() {
    let (t, m) = (PresentTable::new(), Mock::default());
    let a = vec![0u8; 16];
    t.enter(&m, &a, U8, named("a"), Counter::Dynamic, Absent::Copyin)
        .unwrap();
    let e = t
        .enter(
            &m,
            &a[..8],
            F64,
            named("x"),
            Counter::Structured,
            Absent::Copyin,
        )
        .unwrap_err()
        .to_string();
    assert!(e.contains("another element type"), "{e}");
}

#[test]
fn a_moved_variable_is_not_written_and_the_error_says_so() {
    let (t, m) = (PresentTable::new(), Mock::default());
    let a = vec![0u8; 4];
    t.enter(&m, &a, U8, named("a"), Counter::Structured, Absent::Copyin)
        .unwrap();
    let mut elsewhere = vec![0u8; 4];
    let e = t
        .exit(
            &m,
            range(&a),
            Some(&mut elsewhere),
            named("a"),
            Leave {
                counter: Counter::Structured,
                finalize: false,
                release: Release::Copyout,
            },
        )
        .unwrap_err();
    assert!(e.to_string().contains("moved"), "{e}");
    assert_eq!(m.live(), 0, "freed all the same");
}

#[test]
fn the_one_present_part_of_an_array() {
    let (m, t) = (Mock::default(), PresentTable::new());
    let a = [0u8; 16];
    let base = a.as_ptr() as usize;
    assert_eq!(t.present_part(base, 16), None);
    t.enter(
        &m,
        &a[2..6],
        U8,
        named("a[2..6]"),
        Counter::Dynamic,
        Absent::Copyin,
    )
    .unwrap();
    assert_eq!(t.present_part(base, 16), Some((2, 6)));
    // A range the section reaches out of does not hold it.
    assert_eq!(t.present_part(base + 4, 8), None);
    t.enter(
        &m,
        &a[10..12],
        U8,
        named("a[10..12]"),
        Counter::Dynamic,
        Absent::Copyin,
    )
    .unwrap();
    // Two parts: which one a region means is for its clauses to say.
    assert_eq!(t.present_part(base, 16), None);
    assert_eq!(t.present_part(base + 8, 8), Some((2, 4)));
}

#[test]
fn the_generation_changes_when_data_is_added_or_removed_only() {
    let (t, m) = (PresentTable::new(), Mock::default());
    let mut a = vec![1u8; 16];
    let g0 = t.generation();
    t.enter(&m, &a, U8, named("a"), Counter::Structured, Absent::Copyin)
        .unwrap();
    let g1 = t.generation();
    assert_ne!(g0, g1, "a section added");
    // A present increment, an update and a lookup leave where data lives as it was.
    t.enter(&m, &a, U8, named("a"), Counter::Structured, Absent::Copyin)
        .unwrap();
    t.update(&m, HostBytes::Read(&a), U8, named("a"), false)
        .unwrap();
    assert!(t
        .lookup(a.as_ptr() as usize, 16, U8, named("a"))
        .unwrap()
        .is_some());
    assert_eq!(t.generation(), g1);
    let leave = Leave {
        counter: Counter::Structured,
        finalize: false,
        release: Release::Delete,
    };
    let r = range(&a);
    t.exit(&m, r, Some(&mut a), named("a"), leave).unwrap();
    assert_eq!(t.generation(), g1, "still present");
    t.exit(&m, r, Some(&mut a), named("a"), leave).unwrap();
    assert_ne!(t.generation(), g1, "a section removed");
}

/// A mapped section whose owner goes away (an `acc::DeviceVec` dropped): removed at once when
/// no data construct counts it; otherwise left to the constructs, whose end removes it and
/// frees its buffer. Unmapped data cannot be released this way.
#[test]
fn released_mappings_go_now_or_with_the_last_construct() {
    let (t, m) = (PresentTable::new(), Mock::default());
    let a = vec![0u8; 8];
    let buf = m.alloc(U8, 8).unwrap();
    t.map(range(&a), U8, buf, named("a")).unwrap();
    assert!(t.release_mapped(a.as_ptr() as usize).unwrap());
    assert!(!t.is_present(a.as_ptr() as usize, a.len()));
    m.free(buf);

    let buf = m.alloc(U8, 8).unwrap();
    t.map(range(&a), U8, buf, named("a")).unwrap();
    t.enter(&m, &a, U8, named("a"), Counter::Structured, Absent::Copyin)
        .unwrap();
    assert!(!t.release_mapped(a.as_ptr() as usize).unwrap());
    assert!(t.is_present(a.as_ptr() as usize, a.len()));
    assert_eq!(
        m.live(),
        1,
        "the buffer stays while the construct counts it"
    );
    let leave = Leave {
        counter: Counter::Structured,
        finalize: false,
        release: Release::Delete,
    };
    t.exit(&m, range(&a), None, named("a"), leave).unwrap();
    assert!(!t.is_present(a.as_ptr() as usize, a.len()));
    assert_eq!(m.live(), 0, "the construct's end freed it");

    let b = vec![1u8; 4];
    t.enter(&m, &b, U8, named("b"), Counter::Dynamic, Absent::Copyin)
        .unwrap();
    assert!(t.release_mapped(b.as_ptr() as usize).is_err());
}
