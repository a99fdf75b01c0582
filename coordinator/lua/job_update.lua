-- job_update: sets fields of a running job's record (not its state).
-- KEYS: fence, job. ARGV: fence, field, value, ...
if job_state ~= 'running' then return refuse('job', job_state) end
set_fields(KEYS[2], 2)
return 1
