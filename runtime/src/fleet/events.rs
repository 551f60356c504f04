//! Sessions' events in Redis (feature `redis`), shared by every instance of a fleet, so
//! a client resumes any stream with `Last-Event-ID` on any instance.
//!
//! A session is four keys whose hash tag is its id (one Redis Cluster slot): its events
//! in a Redis Stream (`PREFIX{id}:log`, entry ids `<seq>-0`), a hash of its counter,
//! the bytes its events cost and its GET stream (`…:meta`), its ended streams
//! (`…:ended`) and the keys of the events told it outside any request (`…:told`).
//! Every operation is one Lua script, so it is atomic, drops the events past the
//! count, the bytes and the age, and keeps the four keys alive for the session's idle
//! time; one that keeps an event publishes the session's id on `PREFIX` + `wake`,
//! which wakes its readers on every instance.

use std::sync::Arc;
use std::time::Duration;

use crate::StoreError;
use crate::fleet::link::millis;
use crate::http::events::{
    DEFAULT_EVENT_AGE, DEFAULT_EVENT_BYTES_PER_SESSION, DEFAULT_EVENTS_PER_SESSION, EVENT_OVERHEAD,
    EventStore, Replay, parse_id,
};
use crate::http::session_store::Published;
use crate::transport::BoxFuture;

/// How long a session's events and bookkeeping are kept after its last use (default):
/// the sessions' own idle timeout.
const DEFAULT_KEEP: Duration = Duration::from_secs(60 * 60);

/// An [`EventStore`] in Redis (feature `redis`). Keys are `PREFIX{session}:…`.
#[derive(Clone)]
pub struct RedisEventStore {
    redis: crate::fleet::link::Connected,
    prefix: String,
    bounds: Bounds,
    scripts: Arc<Scripts>,
}

#[derive(Debug, Clone, Copy)]
struct Bounds {
    events: usize,
    bytes: usize,
    age: Duration,
    keep: Duration,
}

impl std::fmt::Debug for RedisEventStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisEventStore")
            .field("prefix", &self.prefix)
            .field("bounds", &self.bounds)
            .finish_non_exhaustive()
    }
}

fn failed(e: redis::RedisError) -> StoreError {
    StoreError::caused_by("event store", e)
}

impl RedisEventStore {
    /// Connects to the Redis server at `url` (`redis://host:port/db`), reconnecting on
    /// its own if the link drops. Each session keeps at most 1,000 events, 4 MiB of
    /// them, none older than five minutes (see [`bounds`](Self::bounds)); keys start
    /// with `tern:events:` (a session's id is random, so fleets sharing a Redis do not
    /// meet).
    pub async fn connect(url: &str) -> Result<Self, StoreError> {
        let redis = crate::fleet::link::connect_node(url)
            .await
            .map_err(failed)?;
        Ok(Self::on(redis))
    }

    /// The store on a fleet's link.
    pub(crate) fn on(redis: crate::fleet::link::Connected) -> Self {
        Self {
            redis,
            prefix: "tern:events:".into(),
            bounds: Bounds {
                events: DEFAULT_EVENTS_PER_SESSION,
                bytes: DEFAULT_EVENT_BYTES_PER_SESSION,
                age: DEFAULT_EVENT_AGE,
                keep: DEFAULT_KEEP,
            },
            scripts: Arc::new(Scripts::new()),
        }
    }

    /// Keeps at most `events` per session, in at most `bytes`, none older than `age`;
    /// a session's bookkeeping (its GET stream, its counter) is kept for `keep` after
    /// its last use, which should be at least the sessions' idle timeout.
    pub fn bounds(mut self, events: usize, bytes: usize, age: Duration, keep: Duration) -> Self {
        self.bounds = Bounds {
            events: events.max(1),
            bytes,
            age,
            keep: keep.max(age),
        };
        self
    }

    /// One script call on `session`'s keys, with the bounds and the wake channel
    /// before `args`.
    fn call<'a, T: redis::FromRedisValue + Send + 'a>(
        &'a self,
        script: &'a redis::Script,
        session: &str,
        args: &[&str],
    ) -> BoxFuture<'a, Result<T, StoreError>> {
        let mut call = script.prepare_invoke();
        for part in ["log", "meta", "ended", "told"] {
            call.key(format!("{}{{{session}}}:{part}", self.prefix));
        }
        call.arg(self.bounds.events)
            .arg(self.bounds.bytes)
            .arg(millis(self.bounds.age))
            .arg(millis(self.bounds.keep))
            .arg(format!("{}wake", self.prefix))
            .arg(session)
            .arg(EVENT_OVERHEAD);
        for arg in args {
            call.arg(*arg);
        }
        let mut connection = self.redis.link.clone();
        Box::pin(async move { call.invoke_async(&mut connection).await.map_err(failed) })
    }
}

/// The Lua scripts, each hashed once.
struct Scripts {
    append: redis::Script,
    notify: redis::Script,
    open_get: redis::Script,
    position: redis::Script,
    end_stream: redis::Script,
    replay: redis::Script,
    end_session: redis::Script,
}

impl Scripts {
    fn new() -> Self {
        let script = |body: &str| redis::Script::new(&format!("{COMMON}{body}"));
        Self {
            append: script("return keep(ARGV[8], ARGV[9])"),
            notify: script(NOTIFY),
            open_get: script("redis.call('HSET', meta, 'get', ARGV[8]) touch() return seq()"),
            position: script("touch() return seq()"),
            end_stream: script(
                "redis.call('ZADD', ended, seq(), ARGV[8]) touch() \
                 redis.call('PUBLISH', ARGV[5], ARGV[6]) return 1",
            ),
            replay: script(REPLAY),
            end_session: script("redis.call('DEL', log, meta, ended, told) return 1"),
        }
    }
}

/// What every script begins with: the keys and bounds by name, the time, and the
/// helpers that keep, trim and touch.
const COMMON: &str = r"
local log, meta, ended, told = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local max_n, max_b, age, keep_ms = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
local function field(entry, name)
  local f = entry[2]
  for i = 1, #f, 2 do if f[i] == name then return f[i + 1] end end
end
local function seq() return tonumber(redis.call('HGET', meta, 'seq') or '0') end
local function oldest()
  local first = redis.call('XRANGE', log, '-', '+', 'COUNT', 1)[1]
  if first then return tonumber(string.match(first[1], '^(%d+)')), first end
  return seq() + 1, nil
end
local function trim()
  while true do
    local _, first = oldest()
    if not first then break end
    local over = redis.call('XLEN', log) > max_n
      or tonumber(redis.call('HGET', meta, 'bytes') or '0') > max_b
      or tonumber(field(first, 't')) < now - age
    if not over then break end
    redis.call('XDEL', log, first[1])
    redis.call('HINCRBY', meta, 'bytes', -tonumber(field(first, 'c')))
  end
  redis.call('ZREMRANGEBYSCORE', ended, '-inf', '(' .. oldest())
  redis.call('ZREMRANGEBYSCORE', told, '-inf', '(' .. string.format('%d', now - age))
end
local function touch()
  for _, key in ipairs(KEYS) do redis.call('PEXPIRE', key, keep_ms) end
end
local function keep(stream, message)
  local n = redis.call('HINCRBY', meta, 'seq', 1)
  local cost = #stream + #message + tonumber(ARGV[7])
  redis.call('XADD', log, string.format('%d-0', n), 's', stream, 'm', message,
    't', string.format('%d', now), 'c', cost)
  redis.call('HINCRBY', meta, 'bytes', cost)
  trim()
  touch()
  redis.call('PUBLISH', ARGV[5], ARGV[6])
  return n
end
";

/// Keeps a message on the GET stream, once per key (ARGV[8] the key, ARGV[9] the
/// message).
const NOTIFY: &str = r"
if redis.call('ZSCORE', told, ARGV[8]) then touch() return 0 end
redis.call('ZADD', told, now, ARGV[8])
if redis.call('ZCARD', told) > max_n then redis.call('ZREMRANGEBYRANK', told, 0, -(max_n + 1)) end
return keep(redis.call('HGET', meta, 'get') or 'g0', ARGV[9])
";

/// The events after ARGV[9] on stream ARGV[8]: false when forgotten, else whether the
/// stream ended, then each event's seq and message.
const REPLAY: &str = r"
trim()
local after = tonumber(ARGV[9])
if after > seq() or after + 1 < oldest() then return false end
touch()
local out = { redis.call('ZSCORE', ended, ARGV[8]) and 1 or 0 }
for _, entry in ipairs(redis.call('XRANGE', log, string.format('%d-0', after + 1), '+')) do
  if field(entry, 's') == ARGV[8] then
    out[#out + 1] = string.match(entry[1], '^(%d+)')
    out[#out + 1] = field(entry, 'm')
  end
end
return out
";

impl EventStore for RedisEventStore {
    fn append<'a>(
        &'a self,
        session: &'a str,
        stream: &'a str,
        message: &'a str,
    ) -> BoxFuture<'a, Result<String, StoreError>> {
        let kept = self.call::<u64>(&self.scripts.append, session, &[stream, message]);
        Box::pin(async move { Ok(format!("{stream}.{}", kept.await?)) })
    }

    fn notify<'a>(
        &'a self,
        session: &'a str,
        key: &'a str,
        message: &'a str,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        let kept = self.call::<u64>(&self.scripts.notify, session, &[key, message]);
        Box::pin(async move { kept.await.map(|_| ()) })
    }

    fn open_get<'a>(
        &'a self,
        session: &'a str,
        stream: &'a str,
    ) -> BoxFuture<'a, Result<String, StoreError>> {
        let seq = self.call::<u64>(&self.scripts.open_get, session, &[stream]);
        Box::pin(async move { Ok(format!("{stream}.{}", seq.await?)) })
    }

    fn position<'a>(
        &'a self,
        session: &'a str,
        stream: &'a str,
    ) -> BoxFuture<'a, Result<String, StoreError>> {
        let seq = self.call::<u64>(&self.scripts.position, session, &[]);
        Box::pin(async move { Ok(format!("{stream}.{}", seq.await?)) })
    }

    fn end_stream<'a>(
        &'a self,
        session: &'a str,
        stream: &'a str,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        let done = self.call::<i64>(&self.scripts.end_stream, session, &[stream]);
        Box::pin(async move { done.await.map(|_| ()) })
    }

    fn replay<'a>(
        &'a self,
        session: &'a str,
        after: &'a str,
    ) -> BoxFuture<'a, Result<Option<Replay>, StoreError>> {
        Box::pin(async move {
            let Some((stream, seq)) = parse_id(after) else {
                return Ok(None);
            };
            let seq = seq.to_string();
            let answer: Option<Vec<redis::Value>> = self
                .call(&self.scripts.replay, session, &[stream, &seq])
                .await?;
            Ok(answer.map(|parts| replayed(stream, &parts)))
        })
    }

    fn end_session<'a>(&'a self, session: &'a str) -> BoxFuture<'a, Result<(), StoreError>> {
        let done = self.call::<i64>(&self.scripts.end_session, session, &[]);
        Box::pin(async move { done.await.map(|_| ()) })
    }

    fn listen(&self) -> BoxFuture<'_, Result<Option<Published>, StoreError>> {
        let channel = format!("{}wake", self.prefix);
        Box::pin(async move {
            let sessions = crate::fleet::link::subscribe(&self.redis.client, &channel).await;
            Ok(Some(sessions.map_err(failed)?))
        })
    }
}

/// The replay script's answer as a [`Replay`] of `stream`.
fn replayed(stream: &str, parts: &[redis::Value]) -> Replay {
    let text = |value: &redis::Value| redis::from_redis_value_ref::<String>(value).ok();
    let ended = parts
        .first()
        .and_then(|v| redis::from_redis_value_ref::<i64>(v).ok())
        == Some(1);
    let events = parts
        .get(1..)
        .unwrap_or_default()
        .chunks_exact(2)
        .filter_map(|pair| Some((format!("{stream}.{}", text(&pair[0])?), text(&pair[1])?)))
        .collect();
    Replay {
        stream: stream.to_owned(),
        events,
        ended,
    }
}
