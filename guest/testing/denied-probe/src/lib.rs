//! Test guest: tries everything a language runtime's filesystem and sockets
//! imports could reach and reports, per attempt, `"denied: ..."` or
//! `"ALLOWED"`. The conformance suite runs it under the same linker as the
//! component it checks (`load.denied_links`), and the hostile tests assert
//! that every attempt is denied while the call still answers.

#![cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]

use harmonia_guest_sdk::{Descriptor, Output, Scope, Tool, ToolError};
use serde_json::{Map, Value, json};

struct DeniedProbe;

impl Tool for DeniedProbe {
    fn descriptor() -> Descriptor {
        Descriptor {
            name: "denied_probe",
            version: "0.1.0",
            purpose: "Tries the filesystem, sockets and name lookup and reports what each answered.",
            input_schema: json!({"type": "object"}),
            errors: Descriptor::errors_with_runtime(&[]),
            scope: Scope::Public,
            deadline_ms: 5_000,
            skills: vec!["trend-scan"],
        }
    }

    fn invoke(_input: &str) -> Result<Output, ToolError> {
        let mut report = Map::new();
        for (attempt, outcome) in attempts() {
            report.insert(attempt.to_owned(), Value::String(outcome));
        }
        Ok(Output::new(Value::Object(report), Vec::new()))
    }
}

harmonia_guest_sdk::export_tool!(DeniedProbe);

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
