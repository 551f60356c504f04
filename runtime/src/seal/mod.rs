//! Sealing of `requestState` (in progress).
