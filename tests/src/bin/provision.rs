//! The `provision` example as a binary of this crate, so tests can spawn it as a child
//! process through `env!("CARGO_BIN_EXE_provision")` (Cargo offers no such path for
//! another package's examples).

#[path = "../../../runtime/examples/provision.rs"]
mod example;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    example::main()
}
