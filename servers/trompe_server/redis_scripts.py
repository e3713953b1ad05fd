"""Lua scripts that make each registry change one atomic step inside Redis, whichever replica sends it.

Keys (prefix P): P:sessions (sorted set, member session id, score last use in Redis time), P:s:ID:meta
(hash: counter, nbytes, refreshed), P:s:ID:records (hash image id -> record JSON with its digest),
P:s:ID:order (list of image ids), P:s:ID:blobs (set of digests), P:px:DIGEST (raw pixels),
P:ref:DIGEST (how many records use those pixels), P:nonce:N (the id an append already got).
Every key carries a TTL a little over the idle timeout, so Redis itself forgets abandoned sessions.
Owners, for the per-client quota: P:owners (hash session id -> client), P:c:CLIENT (sorted set of the
client's session ids by last use), P:holders (sorted set, member client, score how many sessions it holds).
These have no TTL: they change only together with P:sessions, so they hold exactly its live members.
"""

# Shared prelude: Redis time, key names, dropping a session, refreshing TTLs.
_COMMON = """
local P = ARGV[1]
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1e6
local function skey(sid, part) return P .. ':s:' .. sid .. ':' .. part end
local function recount(client)
  local held = redis.call('ZCARD', P .. ':c:' .. client)
  if held == 0 then redis.call('ZREM', P .. ':holders', client)
  else redis.call('ZADD', P .. ':holders', held, client) end
end
local function disown(sid)
  local owner = redis.call('HGET', P .. ':owners', sid)
  if owner then
    redis.call('HDEL', P .. ':owners', sid)
    redis.call('ZREM', P .. ':c:' .. owner, sid)
    recount(owner)
  end
end
local function used(sid)
  redis.call('ZADD', P .. ':sessions', now, sid)
  local owner = redis.call('HGET', P .. ':owners', sid)
  if owner then redis.call('ZADD', P .. ':c:' .. owner, 'XX', now, sid) end
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
local function expire_idle(idle)
  for _, sid in ipairs(redis.call('ZRANGEBYSCORE', P .. ':sessions', '-inf', '(' .. (now - idle))) do drop(sid) end
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
  local most = redis.call('ZREVRANGE', P .. ':holders', 0, 0, 'WITHSCORES')[2]
  local victim, oldest = nil, nil
  for _, client in ipairs(most and redis.call('ZRANGEBYSCORE', P .. ':holders', most, most) or {}) do
    local first = redis.call('ZRANGE', P .. ':c:' .. client, 0, 0, 'WITHSCORES')
    if oldest == nil or tonumber(first[2]) < oldest then victim, oldest = first[1], tonumber(first[2]) end
  end
  return victim or redis.call('ZRANGE', P .. ':sessions', 0, 0)[1]
end
"""

# ARGV: prefix, session id, client, max sessions, sessions per client ('' = no quota), idle seconds, ttl seconds.
# A session that left P:sessions without its owner being told (dropped by a replica of an earlier version, or
# lost to an evicting maxmemory-policy) is forgotten before the client's sessions are counted.
CREATE = _COMMON + _LARGEST_HOLDERS_OLDEST + """
local sid, client, max_sessions, per_client = ARGV[2], ARGV[3], tonumber(ARGV[4]), tonumber(ARGV[5])
local idle, ttl = tonumber(ARGV[6]), tonumber(ARGV[7])
local mine = P .. ':c:' .. client
expire_idle(idle)
for _, old in ipairs(redis.call('ZRANGE', mine, 0, -1)) do
  if not redis.call('ZSCORE', P .. ':sessions', old) then
    redis.call('ZREM', mine, old)
    redis.call('HDEL', P .. ':owners', old)
  end
end
recount(client)
while per_client and redis.call('ZCARD', mine) >= per_client do drop(redis.call('ZRANGE', mine, 0, 0)[1]) end
while redis.call('ZCARD', P .. ':sessions') >= max_sessions do drop(largest_holders_oldest()) end
redis.call('ZADD', P .. ':sessions', now, sid)
redis.call('HSET', P .. ':owners', sid, client)
redis.call('ZADD', mine, now, sid)
recount(client)
redis.call('HSET', skey(sid, 'meta'), 'counter', 0, 'nbytes', 0, 'refreshed', now)
redis.call('EXPIRE', skey(sid, 'meta'), ttl)
return 1
"""

# ARGV: prefix, session id, idle seconds, ttl seconds. Returns 1, or 0 for an unknown or idle session.
TOUCH = _COMMON + """
local sid, idle, ttl = ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4])
if not live(sid, idle) then expire_idle(idle) return 0 end
used(sid)
local refreshed = tonumber(redis.call('HGET', skey(sid, 'meta'), 'refreshed') or '0')
if now - refreshed > idle / 4 then refresh(sid, ttl) end
return 1
"""

# ARGV: prefix, session id. Returns the number of images, or -1 for an unknown session.
DROP = _COMMON + """
if not redis.call('ZSCORE', P .. ':sessions', ARGV[2]) then return -1 end
return drop(ARGV[2])
"""

# ARGV: prefix, session id, image id ('' = next output), record JSON (no id), nbytes, digest, pixels,
#       max images, max session bytes, idle seconds, ttl seconds, output id format, nonce.
# Returns {'ok', id} or {reason, value}.
APPEND = _COMMON + """
local sid, image_id, record, nbytes, digest = ARGV[2], ARGV[3], ARGV[4], tonumber(ARGV[5]), ARGV[6]
local max_images, max_bytes, idle, ttl = tonumber(ARGV[8]), tonumber(ARGV[9]), tonumber(ARGV[10]), tonumber(ARGV[11])
local nonce_key = P .. ':nonce:' .. ARGV[13]
local earlier = redis.call('GET', nonce_key)
if earlier then return {'ok', earlier} end
if not live(sid, idle) then return {'session', '0'} end
if image_id ~= '' and redis.call('HEXISTS', skey(sid, 'records'), image_id) == 1 then return {'exists', '0'} end
local count = redis.call('LLEN', skey(sid, 'order'))
if count >= max_images then return {'max_images', tostring(count)} end
local held = tonumber(redis.call('HGET', skey(sid, 'meta'), 'nbytes') or '0')
if held + nbytes > max_bytes then return {'max_session_bytes', tostring(held + nbytes)} end
if image_id == '' then
  image_id = string.format(ARGV[12], redis.call('HINCRBY', skey(sid, 'meta'), 'counter', 1))
end
local px, ref = P .. ':px:' .. digest, P .. ':ref:' .. digest
if redis.call('EXISTS', px) == 0 then redis.call('SET', px, ARGV[7], 'EX', ttl) else extend(px, ttl) end
redis.call('INCR', ref)
extend(ref, ttl)
redis.call('HSET', skey(sid, 'records'), image_id, record)
redis.call('RPUSH', skey(sid, 'order'), image_id)
redis.call('SADD', skey(sid, 'blobs'), digest)
redis.call('HINCRBY', skey(sid, 'meta'), 'nbytes', nbytes)
used(sid)
expire_session(sid, ttl)
redis.call('SET', nonce_key, image_id, 'EX', 600)
return {'ok', image_id}
"""
