#[acc::declare(copy(TABLE))]
static TABLE: [f64; 4] = [0.1, 0.2, 0.3, 0.4];

#[acc::declare(copyin(OTHER))]
static NAMED: [f64; 2] = [1.0, 2.0];

#[acc::declare(create(GOOD), link(GOOD))]
static GOOD: [f64; 2] = [1.0, 2.0];

fn main() {}
