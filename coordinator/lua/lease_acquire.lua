-- lease_acquire: takes or renews the lease of a running or queued job (a
-- queued job's driver waits for its admission holding it); a new holder
-- bumps the fence. KEYS: lease, fence, job. ARGV: owner, ttl ms.
-- Returns the fence, 0 when another owner holds the lease, -1 when the
-- job record is gone, -2 when the job is finished (nothing to drive: the
-- fence stays as it is).
if redis.call('EXISTS', KEYS[3]) == 0 then return -1 end
local st = redis.call('HGET', KEYS[3], 'state')
if st ~= 'running' and st ~= 'queued' then return -2 end
local cur = redis.call('GET', KEYS[1])
if cur and cur ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
if not cur then return redis.call('INCR', KEYS[2]) end
return tonumber(redis.call('GET', KEYS[2]) or '0')
