-- job_admit: queued -> running, once the admission script let the job
-- in (a job already running stays so: a driver that took the job over
-- after its predecessor admitted it admits it again).
-- KEYS: fence, job. ARGV: fence, field, value, ...
if job_state == 'running' then return 1 end
if job_state ~= 'queued' then return refuse('job', job_state) end
set_fields(KEYS[2], 2)
redis.call('HSET', KEYS[2], 'state', 'running')
return 1
