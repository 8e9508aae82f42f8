//! Test guest: tries everything a language runtime's filesystem and sockets
//! imports could reach and reports, per attempt, `"denied: ..."` or
//! `"ALLOWED"`. The conformance suite runs it under the same linker as the
//! component it checks (`load.denied_links`), and the hostile tests assert
//! that every attempt is denied while the call still answers.

use harmonia_guest_sdk::testing::RawInput;
use harmonia_guest_sdk::{Descriptor, Output, ToolError, testing};
use serde_json::{Map, Value};

/// The contract.
pub fn descriptor() -> Descriptor {
    Descriptor {
        purpose: "Tries the filesystem, sockets and name lookup and reports what each answered.",
        ..testing::descriptor("denied_probe", 5_000)
    }
}

/// Every attempt and what it was answered, whatever the input.
pub fn run(_input: RawInput) -> Result<Output, ToolError> {
    let mut report = Map::new();
    for (attempt, outcome) in attempts() {
        report.insert(attempt.to_owned(), Value::String(outcome));
    }
    Ok(Output::new(Value::Object(report), Vec::new()))
}

harmonia_guest_sdk::export!(descriptor, run);

fn verdict<T, E: std::fmt::Debug>(result: Result<T, E>) -> String {
    match result {
        Ok(_) => "ALLOWED".to_owned(),
        Err(error) => format!("denied: {error:?}"),
    }
}

#[cfg(target_arch = "wasm32")]
fn attempts() -> Vec<(&'static str, String)> {
    use wasip2::filesystem::preopens::get_directories;
    use wasip2::sockets::instance_network::instance_network;
    use wasip2::sockets::ip_name_lookup::resolve_addresses;
    use wasip2::sockets::network::{IpAddressFamily, IpSocketAddress, Ipv4SocketAddress};
    use wasip2::sockets::tcp_create_socket::create_tcp_socket;
    use wasip2::sockets::udp_create_socket::create_udp_socket;

    let preopens = get_directories();
    let network = instance_network();
    let loopback = |port| IpSocketAddress::Ipv4(Ipv4SocketAddress { port, address: (127, 0, 0, 1) });
    vec![
        (
            "preopens",
            if preopens.is_empty() {
                "denied: none".to_owned()
            } else {
                format!("ALLOWED: {}", preopens.len())
            },
        ),
        ("read_file", verdict(std::fs::read("/etc/passwd"))),
        ("list_root", verdict(std::fs::read_dir("/"))),
        ("write_file", verdict(std::fs::write("/tmp/harmonia-probe", b"x"))),
        ("std_tcp_connect", verdict(std::net::TcpStream::connect("127.0.0.1:9"))),
        (
            "tcp_connect",
            verdict(
                create_tcp_socket(IpAddressFamily::Ipv4)
                    .and_then(|socket| socket.start_connect(&network, loopback(9)).map(|()| socket)),
            ),
        ),
        (
            "udp_bind",
            verdict(
                create_udp_socket(IpAddressFamily::Ipv4)
                    .and_then(|socket| socket.start_bind(&network, loopback(0)).map(|()| socket)),
            ),
        ),
        ("resolve_name", verdict(resolve_addresses(&network, "localhost"))),
    ]
}

#[cfg(not(target_arch = "wasm32"))]
fn attempts() -> Vec<(&'static str, String)> {
    vec![("native", verdict::<(), _>(Err("not a wasm build")))]
}
