//! `vap-eval`: the command line over the library (`vap_eval::api`, `vap_eval::testing`,
//! `vap_eval::audit`): `eval`, `check`, `test`, `audit`, `completions`.

#[cfg(not(target_arch = "wasm32"))]
mod app;
#[cfg(not(target_arch = "wasm32"))]
mod output;

#[cfg(not(target_arch = "wasm32"))]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[cfg(not(target_arch = "wasm32"))]
fn main() -> std::process::ExitCode {
    app::main()
}

// The workspace's wasm32 checks build every crate; the command line is native only.
#[cfg(target_arch = "wasm32")]
fn main() {}
