//! The `reclaimlab` command (its code is the `reclaimlab_cli` library, src/main.rs).

fn main() -> std::process::ExitCode {
    reclaimlab_cli::main()
}
