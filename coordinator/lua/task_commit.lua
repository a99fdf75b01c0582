-- task_commit: makes an attempt the task's output, first commit wins:
-- -> done. KEYS: fence, job, task, stage. ARGV: fence, attempt, result,
-- [times "invoked_ms,end_ms": recorded with the outcome, for the timeline].
-- Returns 1 when this attempt won, 0 when another attempt had committed.
-- Committing the winning attempt again (a retried call) returns 1 and
-- changes nothing, even once the job finished. Refused for an attempt
-- that was never begun.
local c = redis.call('HGET', KEYS[3], 'committed')
if c == ARGV[2] then return 1 end
if job_state ~= 'running' then return refuse('job', job_state) end
if c then
  if ARGV[4] then redis.call('HSET', KEYS[3], 'end:' .. ARGV[2], ARGV[4] .. ',lost_race') end
  return 0
end
if tonumber(ARGV[2]) > tonumber(redis.call('HGET', KEYS[3], 'attempts') or '0') then
  return refuse('attempt', ARGV[2])
end
redis.call('HSET', KEYS[3], 'committed', ARGV[2], 'state', 'done', 'result', ARGV[3])
if ARGV[4] then redis.call('HSET', KEYS[3], 'end:' .. ARGV[2], ARGV[4] .. ',committed') end
redis.call('HINCRBY', KEYS[4], 'done', 1)
return 1
