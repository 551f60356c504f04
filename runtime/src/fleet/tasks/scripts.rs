//! The Lua scripts of the Redis task store: every change that reads before it writes,
//! each atomic in Redis. The running instance's writes compare its fencing token with
//! the task's `fence` field first and change nothing when they differ.

/// The scripts, each hashed once (a `Script` computes its SHA-1 when made).
pub(super) struct Scripts {
    pub(super) transition: redis::Script,
    pub(super) deliver: redis::Script,
    pub(super) take: redis::Script,
    pub(super) cancel: redis::Script,
    pub(super) renew: redis::Script,
    pub(super) take_over: redis::Script,
}

impl Scripts {
    pub(super) fn new() -> Self {
        Self {
            transition: script(TRANSITION),
            deliver: script(DELIVER),
            take: script(TAKE),
            cancel: script(CANCEL),
            renew: script(RENEW),
            take_over: script(TAKE_OVER),
        }
    }
}

/// What a fenced script answers when the caller's token is not the task's.
pub(super) const LEASE_LOST: i64 = -1;

/// Terminal statuses and the fence, as the scripts test them (a task stored before
/// leases were fenced has no `fence`: 0).
const PRELUDE: &str = "
local function terminal(s) return s == 'completed' or s == 'failed' or s == 'cancelled' end
local function fenced(key, fence) return (redis.call('HGET', key, 'fence') or '0') ~= fence end
";

/// KEYS: task, asks. ARGV: fence, status, message (or ''), result, error, at, resume
/// (or '': kept), then request key/text pairs. Applies unless fenced off, terminal or
/// gone: `{1, owner, expires}` when it applied, `{0, '', 0}` or `{-1, '', 0}` (fenced
/// off) when not.
const TRANSITION: &str = r"
if redis.call('EXISTS', KEYS[1]) == 0 then return {0, '', 0} end
if fenced(KEYS[1], ARGV[1]) then return {-1, '', 0} end
if terminal(redis.call('HGET', KEYS[1], 'status')) then return {0, '', 0} end
redis.call('HSET', KEYS[1], 'status', ARGV[2], 'message', ARGV[3], 'result', ARGV[4], 'error', ARGV[5], 'updated', ARGV[6])
if ARGV[7] ~= '' then redis.call('HSET', KEYS[1], 'resume', ARGV[7]) end
redis.call('DEL', KEYS[2])
if #ARGV > 7 then
  redis.call('HSET', KEYS[2], unpack(ARGV, 8))
  redis.call('PEXPIREAT', KEYS[2], redis.call('HGET', KEYS[1], 'expires'))
end
return {1, redis.call('HGET', KEYS[1], 'owner') or '', redis.call('HGET', KEYS[1], 'expires')}
";

/// KEYS: task, asks, answers. ARGV: at, then answer key/text pairs. Returns the keys
/// accepted.
const DELIVER: &str = r"
if redis.call('HGET', KEYS[1], 'status') ~= 'input_required' then return {} end
local accepted = {}
for i = 2, #ARGV, 2 do
  if redis.call('HDEL', KEYS[2], ARGV[i]) == 1 then
    redis.call('HSET', KEYS[3], ARGV[i], ARGV[i + 1])
    accepted[#accepted + 1] = ARGV[i]
  end
end
if #accepted > 0 then
  redis.call('PEXPIREAT', KEYS[3], redis.call('HGET', KEYS[1], 'expires'))
  redis.call('HSET', KEYS[1], 'updated', ARGV[1])
  if redis.call('HLEN', KEYS[2]) == 0 then redis.call('HSET', KEYS[1], 'status', 'working') end
end
return accepted
";

/// KEYS: task, answers. ARGV: fence. Returns `{1, answers}` and removes every answer,
/// or `{-1, {}}` (fenced off: the answers are left).
const TAKE: &str = r"
if redis.call('EXISTS', KEYS[1]) == 1 and fenced(KEYS[1], ARGV[1]) then return {-1, {}} end
local all = redis.call('HGETALL', KEYS[2])
redis.call('DEL', KEYS[2])
return {1, all}
";

/// KEYS: task. Returns whether the task exists.
const CANCEL: &str = r"
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
if not terminal(redis.call('HGET', KEYS[1], 'status')) then redis.call('HSET', KEYS[1], 'cancel', '1') end
return 1
";

/// KEYS: task. ARGV: now, lease. Takes a task whose lease lapsed: its new fencing token,
/// or 0 when the caller does not hold it.
const TAKE_OVER: &str = r"
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
if terminal(redis.call('HGET', KEYS[1], 'status')) then return 0 end
if tonumber(redis.call('HGET', KEYS[1], 'lease')) >= tonumber(ARGV[1]) then return 0 end
redis.call('HSET', KEYS[1], 'lease', ARGV[2])
return redis.call('HINCRBY', KEYS[1], 'fence', 1)
";

/// KEYS: task. ARGV: fence, lease. Returns 1 when the body should stop, -1 when the
/// caller's lease is lost.
const RENEW: &str = r"
if redis.call('EXISTS', KEYS[1]) == 0 then return 1 end
if fenced(KEYS[1], ARGV[1]) then return -1 end
redis.call('HSET', KEYS[1], 'lease', ARGV[2])
if redis.call('HGET', KEYS[1], 'cancel') == '1' then return 1 end
if terminal(redis.call('HGET', KEYS[1], 'status')) then return 1 end
return 0
";

fn script(body: &str) -> redis::Script {
    redis::Script::new(&format!("{PRELUDE}{body}"))
}
