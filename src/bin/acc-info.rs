//! `acc-info`: the devices this build of `acc` can run regions on, their properties, and which
//! one a program would use by default and why (`cargo run --release --bin acc-info`).

fn main() {
    print!("{}", acc::device_info());
}
