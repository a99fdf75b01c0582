-- round_add: appends a re-planning round to the job's history.
-- KEYS: fence, job, rounds. ARGV: fence, round json.
if job_state ~= 'running' then return refuse('job', job_state) end
return redis.call('RPUSH', KEYS[3], ARGV[2])
