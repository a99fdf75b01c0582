package exec

// Civil-calendar conversions (proleptic Gregorian), after Howard Hinnant's
// days_from_civil / civil_from_days: exact for every int32 day number and
// free of the time package in per-row loops.

// civilFromDays returns year, month (1-12) and day (1-31) of days since
// 1970-01-01.
func civilFromDays(days int64) (y int64, m, d int) {
	z := days + 719468
	var era int64
	if z >= 0 {
		era = z / 146097
	} else {
		era = (z - 146096) / 146097
	}
	doe := z - era*146097                                  // [0, 146096]
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365 // [0, 399]
	y = yoe + era*400
	doy := doe - (365*yoe + yoe/4 - yoe/100) // [0, 365]
	mp := (5*doy + 2) / 153                  // [0, 11]
	d = int(doy - (153*mp+2)/5 + 1)
	if mp < 10 {
		m = int(mp + 3)
	} else {
		m = int(mp - 9)
	}
	if m <= 2 {
		y++
	}
	return y, m, d
}

// daysFromCivil returns days since 1970-01-01 of a civil date.
func daysFromCivil(y int64, m, d int) int64 {
	if m <= 2 {
		y--
	}
	var era int64
	if y >= 0 {
		era = y / 400
	} else {
		era = (y - 399) / 400
	}
	yoe := y - era*400
	mm := int64(m)
	if mm > 2 {
		mm -= 3
	} else {
		mm += 9
	}
	doy := (153*mm+2)/5 + int64(d) - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}

func isLeap(y int64) bool { return y%4 == 0 && (y%100 != 0 || y%400 == 0) }

func daysInMonth(y int64, m int) int {
	switch m {
	case 2:
		if isLeap(y) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// parseDate parses [-]YYYY-MM-DD (surrounding spaces allowed) without
// allocating. ok is false for anything else or an impossible date.
func parseDate(b []byte) (int32, bool) {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t') {
		b = b[:len(b)-1]
	}
	neg := false
	if len(b) > 0 && b[0] == '-' {
		neg = true
		b = b[1:]
	}
	num := func() (int64, bool) {
		var v int64
		i := 0
		for i < len(b) && b[i] >= '0' && b[i] <= '9' && i < 9 {
			v = v*10 + int64(b[i]-'0')
			i++
		}
		if i == 0 {
			return 0, false
		}
		b = b[i:]
		return v, true
	}
	y, ok := num()
	if !ok || len(b) == 0 || b[0] != '-' {
		return 0, false
	}
	b = b[1:]
	m, ok := num()
	if !ok || len(b) == 0 || b[0] != '-' {
		return 0, false
	}
	b = b[1:]
	d, ok := num()
	if !ok || len(b) != 0 {
		return 0, false
	}
	if neg {
		y = -y
	}
	if m < 1 || m > 12 || d < 1 || d > int64(daysInMonth(y, int(m))) {
		return 0, false
	}
	days := daysFromCivil(y, int(m), int(d))
	if days < -1<<31 || days > 1<<31-1 {
		return 0, false
	}
	return int32(days), true
}

// appendDate appends days since the epoch as YYYY-MM-DD.
func appendDate(dst []byte, days int32) []byte {
	y, m, d := civilFromDays(int64(days))
	if y < 0 {
		dst = append(dst, '-')
		y = -y
	}
	if y < 1000 {
		dst = append(dst, '0')
		if y < 100 {
			dst = append(dst, '0')
			if y < 10 {
				dst = append(dst, '0')
			}
		}
	}
	dst = appendUint(dst, uint64(y))
	dst = append(dst, '-', byte('0'+m/10), byte('0'+m%10), '-', byte('0'+d/10), byte('0'+d%10))
	return dst
}

func appendUint(dst []byte, v uint64) []byte {
	var buf [20]byte
	i := len(buf)
	for v >= 10 {
		i--
		buf[i] = byte('0' + v%10)
		v /= 10
	}
	i--
	buf[i] = byte('0' + v)
	return append(dst, buf[i:]...)
}
