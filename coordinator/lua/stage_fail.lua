-- stage_fail: running -> failed (a task failed for good). KEYS: fence,
-- job, stage. ARGV: fence, field, value, ...
if job_state ~= 'running' then return refuse('job', job_state) end
local st = redis.call('HGET', KEYS[3], 'state')
if st ~= 'running' then return refuse('stage', st) end
set_fields(KEYS[3], 2)
redis.call('HSET', KEYS[3], 'state', 'failed')
return 1
