-- lease_release: drops the lease if owner holds it. KEYS: lease. ARGV: owner.
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
