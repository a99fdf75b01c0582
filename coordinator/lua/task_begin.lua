-- task_begin: opens a new attempt of a task unless it is committed:
-- any state but done -> running. KEYS: fence, job, task, stage.
-- ARGV: fence, [now ms: the attempt's open time, for the timeline]. Returns {attempt, failures}, attempt -1 when the task is
-- done (nothing to run). The stage counts attempts too (for status
-- without reading every task).
if job_state ~= 'running' then return refuse('job', job_state) end
local f = tonumber(redis.call('HGET', KEYS[3], 'failures') or '0')
if redis.call('HEXISTS', KEYS[3], 'committed') == 1 then return {-1, f} end
local a = redis.call('HINCRBY', KEYS[3], 'attempts', 1)
redis.call('HSET', KEYS[3], 'state', 'running')
if ARGV[2] then redis.call('HSET', KEYS[3], 'open:' .. a, ARGV[2]) end
redis.call('HINCRBY', KEYS[4], 'attempts', 1)
return {a, f}
