-- job_collected: records that a finished job's objects were deleted.
-- Unfenced (any coordinator's GC may do it). KEYS: job. ARGV: time.
-- Refused unless the job is finished; a vanished record is left alone.
local st = redis.call('HGET', KEYS[1], 'state')
if not st then return 0 end
if st ~= 'succeeded' and st ~= 'failed' and st ~= 'cancelled' then
  return redis.error_reply('REFUSED job ' .. st)
end
redis.call('HSET', KEYS[1], 'collected', ARGV[1])
return 1
