#[acc::declare(link(table))]
fn f(table: &[f32]) -> f32 {
    table[0]
}
fn main() {}
