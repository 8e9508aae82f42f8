//! Which test drives each hostile guest (`guest/hostile/*`): one table, in
//! the spirit of wasmtime's test-programs, so that a hostile guest without a
//! test is a compile error.
//!
//! `tests/all/hostile.rs` and `tests/all/adversary.rs` each start with
//!
//! ```ignore
//! harmonia_testkit::hostile_tests!(hostile); // or (adversary)
//! harmonia_artifacts::foreach_hostile!(assert_test_exists);
//! ```
//!
//! [`hostile_tests!`](crate::hostile_tests) expands, in that file, to a
//! module `tests_by_guest` holding one item per guest of the table: the
//! test itself when the table says this file drives it (so a test renamed
//! or removed breaks the build), a marker otherwise (the other file checks
//! it). `foreach_hostile!`, written by the artifacts' build script from the
//! folders under `guest/hostile/`, then names every guest, and
//! [`assert_test_exists!`](crate::assert_test_exists) refers to it in
//! `tests_by_guest`: a guest missing from the table does not compile.

/// The table: `guest in file: test;`, every hostile guest once.
#[macro_export]
macro_rules! hostile_tests {
    ($file:ident) => {
        $crate::hostile_tests!(@table $file;
            hostile_big_data in hostile: data_that_is_not_an_object_or_not_json_breaks_the_envelope;
            hostile_chatty in hostile: stdout_and_stderr_are_captured_capped_and_kept_out_of_envelopes;
            hostile_counter in hostile: static_state_never_survives_a_call;
            hostile_evidence_flood in hostile: data_that_is_not_an_object_or_not_json_breaks_the_envelope;
            hostile_forged_evidence in adversary: evidence_from_a_call_that_read_nothing_is_refused;
            hostile_invalid_json in hostile: data_that_is_not_an_object_or_not_json_breaks_the_envelope;
            hostile_leaky_message in hostile: contract_codes_carry_the_contracts_message_not_the_guests;
            hostile_loop in hostile: infinite_loop_is_stopped_at_its_deadline_as_tool_timeout;
            hostile_not_object in hostile: data_that_is_not_an_object_or_not_json_breaks_the_envelope;
            hostile_oom in hostile: memory_bomb_hits_the_memory_limit;
            hostile_panic in hostile: panic_becomes_a_fixed_message_and_its_text_stays_in_the_log;
            hostile_receipt_flood in adversary: capability_uses_per_call_are_bounded;
            hostile_recursion in hostile: unbounded_recursion_overflows_the_stack;
            hostile_sockets in hostile: sockets_are_linked_by_default_but_every_address_is_denied;
            hostile_undeclared_error in hostile: undeclared_errors_and_wrong_categories_become_tool_execution_failed;
            hostile_wait in adversary: a_guest_waiting_inside_wasi_ends_at_its_deadline;
            hostile_wait_describe in adversary: a_guest_waiting_inside_describe_fails_its_load_at_the_describe_deadline;
            hostile_wrong_category in hostile: undeclared_errors_and_wrong_categories_become_tool_execution_failed;
        );
    };
    (@table $file:ident; $($guest:ident in $owner:ident: $test:ident;)*) => {
        /// Each hostile guest's test, under the guest's tool name.
        mod tests_by_guest {
            $($crate::hostile_tests!(@entry $file $owner $guest $test);)*
        }
    };
    (@entry hostile hostile $guest:ident $test:ident) => {
        pub(super) use super::$test as $guest;
    };
    (@entry adversary adversary $guest:ident $test:ident) => {
        pub(super) use super::$test as $guest;
    };
    (@entry $file:ident $owner:ident $guest:ident $test:ident) => {
        #[allow(dead_code, non_upper_case_globals)]
        pub(super) const $guest: () = ();
    };
}

/// Refers to the guest `$guest` in the calling file's `tests_by_guest`.
#[macro_export]
macro_rules! assert_test_exists {
    ($guest:ident) => {
        #[allow(unused_imports)]
        use tests_by_guest::$guest as _;
    };
}
