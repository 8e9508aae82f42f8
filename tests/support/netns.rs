//! Several hosts on one machine: network namespaces a test makes (as
//! root), each with its own address on one private bridge, so what a test
//! runs in them talks over a real network stack, and a link can be cut.
//!
//! [`Network::new`] makes a hub namespace holding the bridge (no address
//! of ours lives in the machine's own namespace); [`Network::host`] adds a
//! namespace joined to it by a veth pair, its address `10.89.N.last/24`;
//! [`Host::command`] runs a program inside one. [`Host::cut_from`] drops
//! every packet from a host to an address (a blackhole route: a silent
//! peer, not a refused one) and [`Host::mend_to`] restores it. Dropping
//! the network deletes its namespaces (the test stops what it ran first).

use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};

/// Whether this process can make namespaces (it runs as root).
pub fn can_make_namespaces() -> bool {
    rustix::process::geteuid().is_root()
        && Command::new("ip").arg("-V").stdout(Stdio::null()).stderr(Stdio::null()).status().is_ok()
}

fn ip(args: &[&str]) {
    let output = Command::new("ip").args(args).output().expect("run ip (iproute2)");
    assert!(
        output.status.success(),
        "ip {}: {}",
        args.join(" "),
        String::from_utf8_lossy(&output.stderr).trim()
    );
}

/// A private network: a hub namespace with a bridge, and its hosts.
pub struct Network {
    prefix: String,
    subnet: u8,
    hub: String,
    hosts: Vec<String>,
}

/// One host: a namespace with one address on the network.
#[derive(Clone, Debug)]
pub struct Host {
    /// Its namespace's name.
    pub namespace: String,
    /// Its address.
    pub address: String,
}

impl Network {
    /// A new network; its namespaces' names start with `label`.
    pub fn new(label: &str) -> Self {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let unique = NEXT.fetch_add(1, Ordering::SeqCst);
        let prefix = format!("{label}{}-{unique}", std::process::id() % 100_000);
        // A /24 of 10.89.0.0/16 per network, so two tests never share one.
        let subnet = ((std::process::id() as usize * 7 + unique as usize) % 250 + 1) as u8;
        let hub = format!("{prefix}-hub");
        ip(&["netns", "add", &hub]);
        ip(&["-n", &hub, "link", "set", "lo", "up"]);
        ip(&["-n", &hub, "link", "add", "br0", "type", "bridge"]);
        ip(&["-n", &hub, "link", "set", "br0", "up"]);
        Self { prefix, subnet, hub, hosts: Vec::new() }
    }

    /// The address host `last` gets.
    pub fn address(&self, last: u8) -> String {
        format!("10.89.{}.{last}", self.subnet)
    }

    /// A new host named `name`, at address `10.89.<subnet>.last`.
    pub fn host(&mut self, name: &str, last: u8) -> Host {
        let namespace = format!("{}-{name}", self.prefix);
        let address = self.address(last);
        ip(&["netns", "add", &namespace]);
        ip(&["-n", &namespace, "link", "set", "lo", "up"]);
        // The veth's hub end, named by the host's address (at most 15 bytes).
        let hub_end = format!("v{}", last);
        ip(&[
            "-n", &self.hub, "link", "add", &hub_end, "type", "veth", "peer", "name", "eth0", "netns",
            &namespace,
        ]);
        ip(&["-n", &self.hub, "link", "set", &hub_end, "master", "br0"]);
        ip(&["-n", &self.hub, "link", "set", &hub_end, "up"]);
        ip(&["-n", &namespace, "addr", "add", &format!("{address}/24"), "dev", "eth0"]);
        ip(&["-n", &namespace, "link", "set", "eth0", "up"]);
        self.hosts.push(namespace.clone());
        Host { namespace, address }
    }
}

impl Drop for Network {
    fn drop(&mut self) {
        for namespace in self.hosts.iter().chain([&self.hub]) {
            let _ = Command::new("ip").args(["netns", "del", namespace]).status();
        }
    }
}

impl Host {
    /// `program` run inside this host's namespace.
    pub fn command(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut command = Command::new("ip");
        command.args(["netns", "exec", &self.namespace]).arg(program);
        command
    }

    /// Drop every packet this host sends to `address` (as a cut cable, or a
    /// firewall that drops: its peer hears nothing, nothing is refused).
    pub fn cut_from(&self, address: &str) {
        ip(&["-n", &self.namespace, "route", "add", "blackhole", &format!("{address}/32")]);
    }

    /// Restore what [`Host::cut_from`] cut.
    pub fn mend_to(&self, address: &str) {
        ip(&["-n", &self.namespace, "route", "del", "blackhole", &format!("{address}/32")]);
    }
}
