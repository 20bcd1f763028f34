#[acc::serial]
fn f() {
    acc::init!(device_type(host));
}
fn main() {}
