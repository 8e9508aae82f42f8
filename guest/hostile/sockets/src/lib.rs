//! Hostile test guest: Imports wasi:sockets by opening a TCP connection: refused at load.

use harmonia_guest_sdk::testing::RawInput;
use harmonia_guest_sdk::{Output, ToolError};

/// The hostile behaviour, on any input.
pub fn run(_input: RawInput) -> Result<Output, ToolError> {
    let connected = std::net::TcpStream::connect("127.0.0.1:9").is_ok();
    Ok(Output::new(serde_json::json!({"connected": connected}), Vec::new()))
}

harmonia_guest_sdk::export!(|| harmonia_guest_sdk::testing::descriptor("hostile_sockets", 5000), run);
