//! placeholder until the generator runs
