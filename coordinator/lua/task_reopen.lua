-- task_reopen: done -> pending: drops a task's committed attempt so it
-- runs again (a lost output, LIMIT early stop's safety net).
-- KEYS: fence, job, task, stage. ARGV: fence. Returns 0 when the task
-- was not done.
if job_state ~= 'running' then return refuse('job', job_state) end
if redis.call('HEXISTS', KEYS[3], 'committed') == 0 then return 0 end
redis.call('HDEL', KEYS[3], 'committed', 'result')
redis.call('HSET', KEYS[3], 'state', 'pending')
redis.call('HINCRBY', KEYS[4], 'done', -1)
return 1
