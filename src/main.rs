mod eval;
mod search;
mod index;
mod build;

fn main() {}
