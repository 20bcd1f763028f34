#[acc::offload]
fn f(names: &Vec<String>) {
    #[acc::data(copyin(names))]
    {}
}
fn main() {}
