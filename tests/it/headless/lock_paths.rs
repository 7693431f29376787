//! A lock's folders are what the configuration named when it was read: one replaced since by
//! a symbolic link (to ~/.ssh, say) makes the next start of the lock refuse, instead of
//! following the link.

use super::config::write_config;
use super::{wait_for, Runtime};

#[test]
fn a_lock_folder_swapped_for_a_link_refuses_the_next_start() {
    let runtime = Runtime::new();
    let work = runtime.dir.join("work");
    let secrets = runtime.dir.join("secrets");
    std::fs::create_dir_all(&work).expect("work");
    std::fs::create_dir_all(&secrets).expect("secrets");
    let script = format!("touch {}/written && echo wrote; exec sleep 600", work.display());
    write_config(
        &runtime,
        &format!(
            r#"(threads: [(name: "agent", command: ["sh", "-c", {script:?}], lock: (write: ["{work}"]))])"#,
            work = work.display()
        ),
    );
    let instance = runtime.start(&[]);
    // The positive control: the lock folder as configured is written to.
    instance.wait_for_text("1", "wrote");
    assert!(work.join("written").exists());
    // Another pane of the user's swaps the folder for a link to a folder of secrets.
    std::fs::rename(&work, runtime.dir.join("work.old")).expect("move the folder away");
    std::os::unix::fs::symlink(&secrets, &work).expect("link in its place");
    instance.ctl(&["restart", "--pane", "1"]);
    let mut level = serde_json::Value::Null;
    wait_for("the restarted pane's lock", || {
        level = instance.pane(1)["lock"]["level"].clone();
        level == "refused"
    });
    let detail = instance.pane(1)["lock"]["detail"].to_string();
    assert!(detail.contains("symbolic link"), "{detail}");
    assert!(!secrets.join("written").exists(), "the lock did not follow the link");
}
