-- stage_skip: pending or running -> skipped (the re-planner found it
-- useless; a running one is cancelled). KEYS: fence, job, stage.
-- ARGV: fence, field, value, ...
if job_state ~= 'running' then return refuse('job', job_state) end
local st = redis.call('HGET', KEYS[3], 'state')
if st and st ~= 'pending' and st ~= 'running' and st ~= 'skipped' then return refuse('stage', st) end
set_fields(KEYS[3], 2)
redis.call('HSET', KEYS[3], 'state', 'skipped')
return 1
