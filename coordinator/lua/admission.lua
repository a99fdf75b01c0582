-- admission: lets a queued job in when fewer than ARGV[2] jobs are
-- admitted and it is among the first queued jobs for the free places
-- (first come, first served). KEYS: queued, admitted (one hash tag).
-- ARGV: job, max (0: no limit), now (µs, the queue's scores). Returns 1 when the job is
-- admitted (or was already), 0 when it must wait. A job missing from the
-- queue (a crash between its creation and its queueing) joins its end.
if redis.call('ZSCORE', KEYS[2], ARGV[1]) then return 1 end
local max = tonumber(ARGV[2])
local rank = redis.call('ZRANK', KEYS[1], ARGV[1])
if not rank then
  redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
  rank = redis.call('ZRANK', KEYS[1], ARGV[1])
end
if max > 0 and rank >= max - redis.call('ZCARD', KEYS[2]) then return 0 end
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[1])
return 1
