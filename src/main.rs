// See Cargo.toml: the allocator is part of parsing speed. Benchmarks use the same one.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    packetproof::cli::main()
}
