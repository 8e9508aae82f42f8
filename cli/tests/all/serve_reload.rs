//! `harmonia serve --stdio` reloading its plugin directory on `SIGHUP`:
//! the client, on stdin and stdout as an agent host runs it, is told the
//! tools changed and then lists the new ones. Watching is off in the
//! serve config, so only the signal can have caused the reload.

use crate::support::{StdioClient, harmonia};

#[test]
fn a_stdio_client_is_told_of_a_reload_on_sighup_and_lists_the_new_tools() {
    let dir = std::env::temp_dir().join(format!("harmonia-serve-reload-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let plugins = dir.join("plugins");
    std::fs::create_dir_all(&plugins).unwrap();
    let guest = |name: &str| harmonia_artifacts::test_guest(name).expect("the fixture guest is built");
    std::fs::copy(guest("testing-simple-text"), plugins.join("simple.wasm")).unwrap();
    let config = dir.join("harmonia.toml");
    std::fs::write(&config, format!("mock = true\n[plugins]\ndir = {plugins:?}\n")).unwrap();
    let serve_config = dir.join("serve.toml");
    std::fs::write(&serve_config, "[reload]\nenabled = false\n").unwrap();

    let (mut client, initialized) = StdioClient::start(
        harmonia(&dir)
            .args(["serve", "--stdio", "--workspace", "ws_demo", "--quiet", "--config"])
            .arg(&config)
            .arg("--serve-config")
            .arg(&serve_config),
    );
    assert_eq!(initialized["result"]["capabilities"]["tools"]["listChanged"], true, "{initialized}");
    let before = client.tools();
    assert!(
        before.contains(&"test_simple_text".to_owned())
            && !before.contains(&"test_error_handling".to_owned())
    );

    std::fs::copy(guest("testing-error-handling"), plugins.join("errors.wasm")).unwrap();
    let hup = std::process::Command::new("kill").args(["-HUP", &client.id().to_string()]).status().unwrap();
    assert!(hup.success());
    client.next(|message| message["method"] == "notifications/tools/list_changed");
    let after = client.tools();
    assert!(after.contains(&"test_error_handling".to_owned()), "{after:?}");

    drop(client);
    let _ = std::fs::remove_dir_all(&dir);
}
