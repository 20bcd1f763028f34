#[acc::offload]
fn f(a: &mut [f32]) {
    acc::enter_data!(copyin(a), attach(a));
    #[acc::data(attach(a))]
    {}
    acc::exit_data!(detach(a), delete(a));
}

fn main() {}
