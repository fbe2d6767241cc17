//! Rebuild when the embedded web client (`web-client/app/`) changes, files
//! added or removed included (see `src/web.rs`).

fn main() {
    println!("cargo:rerun-if-changed=../web-client/app");
    println!("cargo:rerun-if-changed=build.rs");
}
