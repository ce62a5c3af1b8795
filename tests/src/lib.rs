//! Conformance tests live in tests/tests.
