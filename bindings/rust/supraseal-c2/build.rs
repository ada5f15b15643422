// Links libstagehand.so from an installed prefix. STAGEHAND_LIB_DIR names the folder that holds
// it; otherwise pkg-config finds stagehand.pc (an install's lib/pkgconfig, through
// PKG_CONFIG_PATH where the prefix is not a system one).
use std::env;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-env-changed=STAGEHAND_LIB_DIR");
    println!("cargo:rerun-if-env-changed=PKG_CONFIG_PATH");
    if let Ok(dir) = env::var("STAGEHAND_LIB_DIR") {
        println!("cargo:rustc-link-search=native={}", dir);
        println!("cargo:rustc-link-lib=dylib=stagehand");
        return;
    }
    let output = Command::new("pkg-config").args(["--libs", "stagehand"]).output();
    let flags = match output {
        Ok(out) if out.status.success() => String::from_utf8_lossy(&out.stdout).into_owned(),
        Ok(out) => panic!(
            "supraseal-c2: `pkg-config --libs stagehand` failed ({}): set PKG_CONFIG_PATH to an install's \
             lib/pkgconfig folder, or STAGEHAND_LIB_DIR to the folder holding libstagehand.so",
            String::from_utf8_lossy(&out.stderr).trim()
        ),
        Err(error) => panic!(
            "supraseal-c2: cannot run pkg-config ({}): install it, or set STAGEHAND_LIB_DIR to the folder \
             holding libstagehand.so",
            error
        ),
    };
    for flag in flags.split_whitespace() {
        if let Some(dir) = flag.strip_prefix("-L") {
            println!("cargo:rustc-link-search=native={}", dir);
        } else if let Some(lib) = flag.strip_prefix("-l") {
            println!("cargo:rustc-link-lib=dylib={}", lib);
        }
    }
}
