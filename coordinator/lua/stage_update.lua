-- stage_update: sets fields of a stage record (its work fingerprint, a
-- repaired output), not its state. KEYS: fence, job, stage.
-- ARGV: fence, field, value, ...
if job_state ~= 'running' then return refuse('job', job_state) end
set_fields(KEYS[3], 2)
return 1
