fn main() -> std::process::ExitCode {
    packetproof::cli::main()
}
