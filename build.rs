//! The user guide's pages (`docs/guide/*.md`) as the crate docs include them (`src/guide.rs`):
//! links between pages (`[data](data.md#subarrays)`), which work on the forge, become intra-doc
//! links to the page's module (`crate::guide::data#subarrays`), which work in rustdoc.

use std::{env, fs, path::Path};

/// Each page's file and the module of `acc::guide` that shows it.
const PAGES: &[(&str, &str)] = &[
    ("README.md", "getting_started"),
    ("directives.md", "directives"),
    ("regions.md", "regions"),
    ("data.md", "data"),
    ("types.md", "types"),
    ("devices.md", "devices"),
    ("tools.md", "tools"),
    ("performance.md", "performance"),
    ("troubleshooting.md", "troubleshooting"),
    ("porting-from-c.md", "porting_from_c"),
    ("multi-device.md", "multi_device"),
];

fn main() {
    let out = env::var("OUT_DIR").expect("cargo sets OUT_DIR");
    for (file, _) in PAGES {
        let path = Path::new("docs/guide").join(file);
        println!("cargo:rerun-if-changed={}", path.display());
        let text =
            fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
        let mut text = text;
        for (other, module) in PAGES {
            text = text.replace(&format!("]({other}"), &format!("](crate::guide::{module}"));
        }
        fs::write(Path::new(&out).join(file), text).expect("writing into OUT_DIR");
    }
}
