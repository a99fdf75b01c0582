-- The prelude of every fenced transition (prepended to its script).
-- KEYS[1] is the job's fencing token and KEYS[2] its record; ARGV[1] is the
-- caller's fence. A caller whose fence moved on (another coordinator took
-- the job over) gets STALE_FENCE. job_state is the job's state: every
-- transition requires it running (a finished job changes no more).
-- refuse() is how a script reports a precondition that does not hold:
-- REFUSED <what> <state it found>.
local function refuse(what, state)
  return redis.error_reply('REFUSED ' .. what .. ' ' .. (state or 'none'))
end
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return redis.error_reply('STALE_FENCE') end
local job_state = redis.call('HGET', KEYS[2], 'state')
-- set_fields sets ARGV[from], ARGV[from+1], ... as field/value pairs of
-- key, all but 'state': states change only by transitions (the Go side
-- refuses such a call before it gets here).
local function set_fields(key, from)
  for i = from, #ARGV, 2 do
    if ARGV[i] ~= 'state' then redis.call('HSET', key, ARGV[i], ARGV[i + 1]) end
  end
end
