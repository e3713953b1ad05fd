"""Lua scripts that make each registry change one atomic step inside Redis, whichever replica sends it.

Keys (prefix P): P:sessions (sorted set, member session id, score last use in Redis time), P:s:ID:meta
(hash: counter, nbytes, refreshed), P:s:ID:records (hash image id -> record JSON with its digest),
P:s:ID:order (list of image ids), P:s:ID:blobs (set of digests), P:px:DIGEST (pixels, written by the replica
before APPEND runs: scripts never receive pixels as arguments), P:ref:DIGEST (how many records use those
pixels), P:nonce:ID:N (the image id append N already got), P:open:N (the session open N already made),
P:gone:ID (the quota that evicted live session ID: 'max_sessions_per_client' or 'max_sessions').
Every key carries a TTL a little over the idle timeout, so Redis itself forgets abandoned sessions.
Owners, for the per-client quota: P:owners (hash session id -> client), P:c:CLIENT (sorted set of the
client's session ids by last use), P:largest (sorted set, all scores 0, one member per client that holds
sessions, 'HELD:OLDEST:CLIENT' with HELD counted down from 10^12 and OLDEST the last use of its least recently
used session, both fixed width: its first member is the client holding the most, the least recently used
among those tied). These have no TTL: they change only together with P:sessions, so they hold its members.
(Earlier versions kept P:holders, counts by client; it is no longer read.)

Every script does a bounded amount of work, whatever the number of live sessions: each command it sends is
O(log n) in the sessions held, and it loops only over one session's images or over at most SWEEP idle
sessions. Sessions idle past the timeout are swept from the indexes SWEEP at a time by each open (and by a
touch that finds its session gone); Redis has already forgotten their keys by their TTLs. Until swept they
are still in P:sessions and counted by the quotas, but they are also the least recently used, so the
eviction a quota makes drops one of them before any live session: idle sessions never make a live one go.

Over `maxmemory` Redis refuses CREATE and APPEND whole, before they run (a shebang script without
allow-oom), while TOUCH and DROP may still run: reads, listings and close_session keep working, and closing
sessions is how memory is freed.
"""

_MAY_RUN_OVER_MAXMEMORY = "#!lua flags=allow-oom\n"  # only removes, or writes a few bytes
_REFUSED_OVER_MAXMEMORY = "#!lua\n"  # stores: refused as a whole, with no effect, when Redis is full

# Shared prelude: Redis time, key names, dropping a session, refreshing TTLs.
_COMMON = """
local P = ARGV[1]
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1e6
local function skey(sid, part) return P .. ':s:' .. sid .. ':' .. part end
local function standing(client)  -- the client's member of P:largest, nil when it holds none
  local first = redis.call('ZRANGE', P .. ':c:' .. client, 0, 0, 'WITHSCORES')
  if not first[2] then return nil end
  local held = redis.call('ZCARD', P .. ':c:' .. client)
  return string.format('%012d:%020.6f:%s', 1e12 - held, tonumber(first[2]), client)
end
local function restand(client, before)  -- after a change to the client's sessions, `before` its standing then
  local after = standing(client)
  if before == after then return end
  if before then redis.call('ZREM', P .. ':largest', before) end
  if after then redis.call('ZADD', P .. ':largest', 0, after) end
end
local function disown(sid)
  local owner = redis.call('HGET', P .. ':owners', sid)
  if owner then
    local before = standing(owner)
    redis.call('HDEL', P .. ':owners', sid)
    redis.call('ZREM', P .. ':c:' .. owner, sid)
    restand(owner, before)
  end
end
local function used(sid)
  redis.call('ZADD', P .. ':sessions', now, sid)
  local owner = redis.call('HGET', P .. ':owners', sid)
  if owner then
    local before = standing(owner)
    redis.call('ZADD', P .. ':c:' .. owner, 'XX', now, sid)
    restand(owner, before)
  end
end
local function drop(sid)
  local count = redis.call('LLEN', skey(sid, 'order'))
  for _, value in ipairs(redis.call('HVALS', skey(sid, 'records'))) do
    local digest = cjson.decode(value)['digest']
    if redis.call('DECR', P .. ':ref:' .. digest) <= 0 then
      redis.call('DEL', P .. ':ref:' .. digest, P .. ':px:' .. digest)
    end
  end
  redis.call('DEL', skey(sid, 'meta'), skey(sid, 'records'), skey(sid, 'order'), skey(sid, 'blobs'))
  redis.call('ZREM', P .. ':sessions', sid)
  disown(sid)
  return count
end
local SWEEP = 16  -- idle sessions one call sweeps at most
local function expire_idle(idle)
  local idle_ones = redis.call('ZRANGEBYSCORE', P .. ':sessions', '-inf', '(' .. (now - idle), 'LIMIT', 0, SWEEP)
  for _, sid in ipairs(idle_ones) do drop(sid) end
end
local function idle_oldest(key, idle)  -- the least recently used member of `key`, if it is idle
  local first = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
  if first[2] and tonumber(first[2]) < now - idle then return first[1] end
end
local function live(sid, idle)
  local score = redis.call('ZSCORE', P .. ':sessions', sid)
  return score and tonumber(score) >= now - idle
end
local function extend(key, ttl)
  if redis.call('EXPIRE', key, ttl, 'GT') == 0 then redis.call('EXPIRE', key, ttl, 'NX') end
end
local function expire_session(sid, ttl)
  for _, part in ipairs({'meta', 'records', 'order', 'blobs'}) do redis.call('EXPIRE', skey(sid, part), ttl) end
end
local function refresh(sid, ttl)
  expire_session(sid, ttl)
  for _, digest in ipairs(redis.call('SMEMBERS', skey(sid, 'blobs'))) do
    extend(P .. ':px:' .. digest, ttl)
    extend(P .. ':ref:' .. digest, ttl)
  end
  redis.call('HSET', skey(sid, 'meta'), 'refreshed', now)
end
"""

# The least recently used session of the clients holding the most (of any session, for sessions stored by
# an earlier version, which have no owner).
_LARGEST_HOLDERS_OLDEST = """
local function largest_holders_oldest()
  local top = redis.call('ZRANGE', P .. ':largest', 0, 0)[1]
  local victim = top and redis.call('ZRANGE', P .. ':c:' .. string.sub(top, 35), 0, 0)[1]
  return victim or redis.call('ZRANGE', P .. ':sessions', 0, 0)[1]
end
"""

# ARGV: prefix, session id, client, max sessions, sessions per client ('' = no quota), idle seconds, ttl seconds,
#       request id ('' = none). Returns the session id: an earlier one when this request already opened one.
# Each quota evicts at most one session when the limits are the same on every replica (no open lets a count
# past its limit), an idle one first. A session that left P:sessions without its owner being told (dropped by
# a replica of an earlier version, or lost to an evicting maxmemory-policy) is forgotten when it comes up as
# its client's least recently used.
CREATE = _REFUSED_OVER_MAXMEMORY + _COMMON + _LARGEST_HOLDERS_OLDEST + """
local sid, client, max_sessions, per_client = ARGV[2], ARGV[3], tonumber(ARGV[4]), tonumber(ARGV[5])
local idle, ttl = tonumber(ARGV[6]), tonumber(ARGV[7])
local mine = P .. ':c:' .. client
local opened = ARGV[8] ~= '' and (P .. ':open:' .. ARGV[8]) or nil
if opened then
  local earlier = redis.call('GET', opened)
  if earlier and live(earlier, idle) then return earlier end
end
expire_idle(idle)
local function evict(victim, quota)  -- a live session a quota drops leaves the quota's name behind
  if live(victim, idle) then redis.call('SET', P .. ':gone:' .. victim, quota, 'EX', ttl) end
  drop(victim)
end
while per_client and redis.call('ZCARD', mine) >= per_client do
  evict(redis.call('ZRANGE', mine, 0, 0)[1], 'max_sessions_per_client')
end
while redis.call('ZCARD', P .. ':sessions') >= max_sessions do
  local idle_one = idle_oldest(P .. ':sessions', idle)
  if idle_one then drop(idle_one) else evict(largest_holders_oldest(), 'max_sessions') end
end
local before = standing(client)
redis.call('ZADD', P .. ':sessions', now, sid)
redis.call('HSET', P .. ':owners', sid, client)
redis.call('ZADD', mine, now, sid)
restand(client, before)
redis.call('HSET', skey(sid, 'meta'), 'counter', 0, 'nbytes', 0, 'refreshed', now)
redis.call('EXPIRE', skey(sid, 'meta'), ttl)
if opened then redis.call('SET', opened, sid, 'EX', ttl) end
return sid
"""

# ARGV: prefix, session id, idle seconds, ttl seconds. Returns 1, or 0 for an unknown or idle session.
TOUCH = _MAY_RUN_OVER_MAXMEMORY + _COMMON + """
local sid, idle, ttl = ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4])
if not live(sid, idle) then expire_idle(idle) return 0 end
used(sid)
local refreshed = tonumber(redis.call('HGET', skey(sid, 'meta'), 'refreshed') or '0')
if now - refreshed > idle / 4 then refresh(sid, ttl) end
return 1
"""

# ARGV: prefix, session id. Returns the number of images, or -1 for an unknown session.
DROP = _MAY_RUN_OVER_MAXMEMORY + _COMMON + """
if not redis.call('ZSCORE', P .. ':sessions', ARGV[2]) then return -1 end
return drop(ARGV[2])
"""

# ARGV: prefix, session id, image id ('' = next output), record JSON (no id), nbytes, digest, max images,
#       max session bytes, idle seconds, ttl seconds, output id format, nonce (a request id, or random).
# Returns {'ok', id}, {'again', id} when this nonce already stored id, {'pixels', '0'} when P:px:DIGEST is
# missing (written, then freed by a close before this ran: write it again), or {reason, value}.
APPEND = _REFUSED_OVER_MAXMEMORY + _COMMON + """
local sid, image_id, record, nbytes, digest = ARGV[2], ARGV[3], ARGV[4], tonumber(ARGV[5]), ARGV[6]
local max_images, max_bytes, idle, ttl = tonumber(ARGV[7]), tonumber(ARGV[8]), tonumber(ARGV[9]), tonumber(ARGV[10])
local nonce_key = P .. ':nonce:' .. sid .. ':' .. ARGV[12]
local earlier = redis.call('GET', nonce_key)
if earlier then return {'again', earlier} end
if not live(sid, idle) then return {'session', '0'} end
if image_id ~= '' and redis.call('HEXISTS', skey(sid, 'records'), image_id) == 1 then return {'exists', '0'} end
local count = redis.call('LLEN', skey(sid, 'order'))
if count >= max_images then return {'max_images', tostring(count)} end
local held = tonumber(redis.call('HGET', skey(sid, 'meta'), 'nbytes') or '0')
if held + nbytes > max_bytes then return {'max_session_bytes', tostring(held + nbytes)} end
local px, ref = P .. ':px:' .. digest, P .. ':ref:' .. digest
if redis.call('EXISTS', px) == 0 then return {'pixels', '0'} end  -- before anything is written
if image_id == '' then
  image_id = string.format(ARGV[11], redis.call('HINCRBY', skey(sid, 'meta'), 'counter', 1))
end
extend(px, ttl)
redis.call('INCR', ref)
extend(ref, ttl)
redis.call('HSET', skey(sid, 'records'), image_id, record)
redis.call('RPUSH', skey(sid, 'order'), image_id)
redis.call('SADD', skey(sid, 'blobs'), digest)
redis.call('HINCRBY', skey(sid, 'meta'), 'nbytes', nbytes)
used(sid)
expire_session(sid, ttl)
redis.call('SET', nonce_key, image_id, 'EX', ttl)
return {'ok', image_id}
"""

# ARGV: prefix, digest. Frees pixels a replica wrote for an APPEND that was then refused, unless a record uses
# them; returns 1 when they were freed.
UNUSED = _MAY_RUN_OVER_MAXMEMORY + """
local P, digest = ARGV[1], ARGV[2]
if redis.call('EXISTS', P .. ':ref:' .. digest) == 1 then return 0 end
return redis.call('DEL', P .. ':px:' .. digest)
"""
