//! The guest components, built once per build by `build.rs`.
//!
//! - [`BUILTIN_TOOLS`]: the six Harmonia tools, embedded as bytes so the
//!   host binary needs no plugin files.
//! - [`TEST_GUESTS`]: hostile and test guests (`guest/hostile`,
//!   `guest/testing`), as paths, for the test suite.
//! - [`BENCH_GUESTS`]: the trivial and runaway-loop guests, embedded for
//!   `harmonia bench`, and the denied-links probe the conformance suite
//!   runs.
//! - [`foreach_hostile!`]: calls a macro once per hostile guest, so the
//!   tests can make a hostile guest without a test a compile error.

include!(concat!(env!("OUT_DIR"), "/artifacts.rs"));

/// The path of the test guest crate `name` (such as `hostile-loop`).
pub fn test_guest(name: &str) -> Option<&'static str> {
    TEST_GUESTS.iter().find(|(guest, _)| *guest == name).map(|(_, path)| *path)
}

/// The bytes of an embedded guest (`testing-trivial`, `hostile-loop`,
/// `testing-denied-probe`).
pub fn bench_guest(name: &str) -> Option<&'static [u8]> {
    BENCH_GUESTS.iter().find(|(guest, _)| *guest == name).map(|(_, bytes)| *bytes)
}
