-- job_finish: running or queued -> succeeded, failed or cancelled. Stages still
-- running become ARGV[3] (cancelled): a finished job has no running
-- stage. With a retention (ARGV[5] ms > 0) every key given
-- expires then.
-- KEYS: fence, job, the job's stage keys (ARGV[4] of them), then its
-- other keys (tasks, rounds, cancel flag, limit counters).
-- ARGV: fence, state, state of running stages, stage count, retention ms,
-- field, value, ...
if job_state ~= 'running' and job_state ~= 'queued' then return refuse('job', job_state) end
local to = ARGV[2]
if to ~= 'succeeded' and to ~= 'failed' and to ~= 'cancelled' then return refuse('finish to', to) end
local n = tonumber(ARGV[4])
for i = 3, 2 + n do
  if redis.call('HGET', KEYS[i], 'state') == 'running' then
    redis.call('HSET', KEYS[i], 'state', ARGV[3])
  end
end
set_fields(KEYS[2], 6)
redis.call('HSET', KEYS[2], 'state', to)
local ttl = tonumber(ARGV[5])
if ttl > 0 then
  for i = 1, #KEYS do redis.call('PEXPIRE', KEYS[i], ttl) end
end
return 1
