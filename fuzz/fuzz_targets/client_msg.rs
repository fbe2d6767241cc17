//! Frame decoding: any bytes a socket may carry, decoded as the server decodes
//! a client's frame. A frame is refused or accepted, never a panic; an
//! accepted message encodes and decodes back to itself (nothing is lost or
//! invented on the way through the protocol types).
#![no_main]

use libfuzzer_sys::fuzz_target;
use protocol::ClientMsg;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(msg) = serde_json::from_str::<ClientMsg>(text) {
        let again = serde_json::to_string(&msg).expect("an accepted message encodes");
        let back: ClientMsg = serde_json::from_str(&again).expect("an encoded message decodes");
        assert_eq!(back, msg, "round trip of {text:?}");
    }
});
