-- job_create: none -> running, or none -> queued when admission control
-- holds jobs back (Config.MaxJobs). KEYS: job. ARGV: state, field,
-- value, ... Refused when the record exists (job ids are unique: a
-- second create is a bug or a replay).
if redis.call('EXISTS', KEYS[1]) == 1 then
  return redis.error_reply('REFUSED job ' .. (redis.call('HGET', KEYS[1], 'state') or 'exists'))
end
local to = ARGV[1]
if to ~= 'running' and to ~= 'queued' then
  return redis.error_reply('REFUSED create ' .. to)
end
for i = 2, #ARGV, 2 do
  if ARGV[i] ~= 'state' then redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1]) end
end
redis.call('HSET', KEYS[1], 'state', to)
return 1
