-- task_fail: records a failed attempt: any state but done -> retrying,
-- failed, input_lost or waiting. Failures count against the task's retry
-- budget, except a lost input (the producer's fault, not the task's) and an
-- infrastructure outage within its budget (waiting).
-- KEYS: fence, job, task, stage. ARGV: fence, error, state,
-- [attempt, times "invoked_ms,end_ms": recorded with the state, for the timeline].
-- Returns 0 (and changes nothing) when the task is done.
if job_state ~= 'running' then return refuse('job', job_state) end
local to = ARGV[3]
if to ~= 'retrying' and to ~= 'failed' and to ~= 'input_lost' and to ~= 'waiting' then return refuse('fail to', to) end
if ARGV[4] then redis.call('HSET', KEYS[3], 'end:' .. ARGV[4], ARGV[5] .. ',' .. to) end
if redis.call('HEXISTS', KEYS[3], 'committed') == 1 then return 0 end
redis.call('HSET', KEYS[3], 'state', to, 'error', ARGV[2])
if to ~= 'input_lost' and to ~= 'waiting' then
  redis.call('HINCRBY', KEYS[3], 'failures', 1)
  redis.call('HINCRBY', KEYS[4], 'failures', 1)
end
return 1
