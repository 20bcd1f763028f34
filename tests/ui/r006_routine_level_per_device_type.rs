// 3.3 section 2.4's example: `gang` is a default clause, so it applies on nvidia too, where
// `worker` also applies.
#[acc::routine(gang, device_type(nvidia) worker)]
fn f(x: f32) -> f32 { x }
fn main() {}
