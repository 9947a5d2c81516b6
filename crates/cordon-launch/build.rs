//! `cfg(linux_backends)`: the bubblewrap and Landlock backends are compiled (Linux, with the
//! `linux-backends` feature, which is on by default).

fn main() {
    println!("cargo::rustc-check-cfg=cfg(linux_backends)");
    let linux = std::env::var("CARGO_CFG_TARGET_OS").is_ok_and(|os| os == "linux");
    if linux && std::env::var_os("CARGO_FEATURE_LINUX_BACKENDS").is_some() {
        println!("cargo::rustc-cfg=linux_backends");
    }
}
