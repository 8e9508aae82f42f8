//! Envelope parsing: never panics; what it accepts round-trips.
#![no_main]

use harmonia_contract::envelope::Envelope;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Ok(envelope) = Envelope::parse(&text) {
        assert!(envelope.validate().is_ok());
        assert_eq!(Envelope::parse(&envelope.to_json()).expect("re-parse"), envelope);
    }
});
