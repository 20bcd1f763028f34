//! What `acc` tells a user about what it does (DESIGN.md section 7): `ACC_NOTIFY=1` prints one
//! line per launch and per transfer on stderr; `ACC_DUMP=ir,wgsl` writes what each stage
//! produced for a kernel to `ACC_DUMP_DIR` (default `acc-dump`).

use std::path::PathBuf;
use std::sync::OnceLock;

struct Settings {
    notify: bool,
    dump: Vec<String>,
    dir: PathBuf,
}

fn settings() -> &'static Settings {
    static S: OnceLock<Settings> = OnceLock::new();
    S.get_or_init(|| {
        let var = |n: &str| std::env::var(n).ok().filter(|v| !v.trim().is_empty());
        Settings {
            notify: var("ACC_NOTIFY").is_some_and(|v| v.trim() != "0"),
            dump: var("ACC_DUMP")
                .map(|v| {
                    v.split(',')
                        .map(|s| s.trim().to_ascii_lowercase())
                        .collect()
                })
                .unwrap_or_default(),
            dir: var("ACC_DUMP_DIR")
                .map(PathBuf::from)
                .unwrap_or_else(|| PathBuf::from("acc-dump")),
        }
    })
}

/// Whether `ACC_NOTIFY` is on.
pub fn notifying() -> bool {
    settings().notify
}

/// Prints `line` on stderr when `ACC_NOTIFY` is on.
pub fn notify(line: impl FnOnce() -> String) {
    if notifying() {
        eprintln!("acc: {}", line());
    }
}

/// Writes `text` as `<name>.<stage>` in the dump directory when `ACC_DUMP` names `stage`; a
/// dump that cannot be written is reported on stderr, never fatal.
pub fn dump(stage: &str, name: &str, text: impl FnOnce() -> String) {
    let s = settings();
    if !s.dump.iter().any(|d| d == stage || d == "all") {
        return;
    }
    let file: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let path = s.dir.join(format!("{file}.{stage}"));
    let result = std::fs::create_dir_all(&s.dir).and_then(|_| std::fs::write(&path, text()));
    match result {
        Ok(()) => notify(|| format!("dumped {}", path.display())),
        Err(e) => eprintln!("acc: ACC_DUMP could not write {}: {e}", path.display()),
    }
}
