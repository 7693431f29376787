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

/// An edit that loosens a running lock (here: the network on) is named in `ls` and changes
/// nothing until the user restarts the thread.
#[test]
fn a_configuration_edit_that_loosens_a_lock_is_named_and_waits_for_the_user() {
    let runtime = Runtime::new();
    let work = runtime.dir.join("work");
    std::fs::create_dir_all(&work).expect("work");
    let config = |network: &str| {
        format!(
            r#"(threads: [(name: "agent", command: ["sleep", "600"], lock: (write: ["{work}"], network: {network}))])"#,
            work = work.display()
        )
    };
    let path = write_config(&runtime, &config("Off"));
    let instance = runtime.start(&[]);
    let detail = |instance: &super::Instance| instance.pane(1)["lock"]["detail"].clone();
    wait_for("the lock", || detail(&instance) == "files + network");
    std::fs::write(&path, config("On")).expect("edit");
    wait_for("the loosening named", || {
        instance.pane(1)["lock_widening"] == serde_json::json!(["network on"])
    });
    let listing = instance.run(&["ls"]);
    assert!(super::text(&listing.stdout).contains("config changed: lock wider"));
    assert_eq!(detail(&instance), "files + network", "nothing changes before a restart");
    instance.ctl(&["restart", "--pane", "1"]);
    wait_for("the user's restart", || detail(&instance) != "files + network");
    assert_eq!(instance.pane(1)["lock_widening"], serde_json::Value::Null);
}
