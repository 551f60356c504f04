//! tern's integration tests, as one test binary: one compile and one link for them all,
//! where a binary per file took one link each. Each module is one area; test names carry
//! the module, e.g. `cargo test -p tern-tests --test it -- mrtr_loop::`.
//!
//! `compile_fail` stays a binary of its own: its trybuild cases build crates of their own
//! for minutes, and apart they stay out of the way of `--test it`.

mod http_support;
mod log_support;
mod redis_support;
mod transports;

mod api_listing;
mod apps;
mod client_cache;
mod client_surface;
mod dispatch;
mod era_discovery;
mod era_interop;
mod examples;
mod extension_seam;
mod fleet;
mod fleet_cluster;
mod fleet_sessions;
mod fleet_streams;
mod flow_as_data;
mod flows;
mod gateway;
mod generated;
mod high_level_server;
mod hostile_server;
mod http2;
mod http_budgets;
mod http_eras;
mod http_flow;
mod http_instances;
mod http_overload;
mod http_rules;
mod http_tls;
mod http_wire;
mod json_budgets;
mod legacy_client;
mod legacy_session;
mod mrtr_loop;
mod oauth_e2e;
mod oauth_enterprise;
mod oauth_machine;
mod oauth_server;
mod readme;
mod readme_builds;
mod readme_deploying;
mod readme_run;
mod request_logging;
mod resolver_eras;
mod schema_fetch;
mod sealing_kit;
mod server_layers;
mod session_budgets;
mod session_features;
mod session_streams;
mod shared_body_attacker;
mod single_use;
mod skills;
mod stdio_flow;
mod tasks;

// #60: each surface attacked as a hostile client, upstream or token holder would.
mod client_seam_attacker;
mod dpop_attacker;
mod dpop_hostile;
mod front_door;
mod gateway_attacker;
mod gateway_budgets;
mod gateway_holds;
mod gateway_names;
mod http_hostile;
mod message_deadlines;
mod task_leases;
mod tasks_attacker;
mod websocket;
