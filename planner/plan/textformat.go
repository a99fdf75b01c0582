package plan

import "strconv"

// AppendDecimal appends the text of an unscaled decimal value with the
// given scale (scale ≥ 0): "-12.05" for -1205 at scale 2, "0.05" for 5.
// It allocates nothing, so result encoders can call it once per value.
func AppendDecimal(dst []byte, v int64, scale int) []byte {
	if scale <= 0 {
		return strconv.AppendInt(dst, v, 10)
	}
	u := uint64(v)
	if v < 0 {
		dst = append(dst, '-')
		u = -u // also right for math.MinInt64
	}
	var tmp [24]byte
	digits := strconv.AppendUint(tmp[:0], u, 10)
	if len(digits) <= scale { // 0.00ddd
		dst = append(dst, '0', '.')
		for i := len(digits); i < scale; i++ {
			dst = append(dst, '0')
		}
		return append(dst, digits...)
	}
	cut := len(digits) - scale
	dst = append(dst, digits[:cut]...)
	dst = append(dst, '.')
	return append(dst, digits[cut:]...)
}

// AppendDate appends days since the epoch as YYYY-MM-DD. Years outside
// 1..9999 are printed as Go's time package prints them.
func AppendDate(dst []byte, days int32) []byte {
	y, m, d := civil(int64(days))
	if y < 1 || y > 9999 {
		return append(dst, formatDateSlow(days)...)
	}
	return append(dst,
		byte('0'+y/1000), byte('0'+y/100%10), byte('0'+y/10%10), byte('0'+y%10), '-',
		byte('0'+m/10), byte('0'+m%10), '-',
		byte('0'+d/10), byte('0'+d%10))
}

// civil converts days since 1970-01-01 to a proleptic Gregorian date
// (Howard Hinnant's days_from_civil inverse).
func civil(z int64) (y, m, d int64) {
	z += 719468
	era := z / 146097
	if z < 0 && z%146097 != 0 {
		era--
	}
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	y = yoe + era*400
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d = doy - (153*mp+2)/5 + 1
	if mp < 10 {
		m = mp + 3
	} else {
		m = mp - 9
	}
	if m <= 2 {
		y++
	}
	return y, m, d
}

// AppendTimestamp appends microseconds since the epoch as FormatTimestamp
// prints them ("2006-01-02 15:04:05" and the fraction without trailing
// zeros), allocating nothing for years 1 to 9999.
func AppendTimestamp(dst []byte, us int64) []byte {
	days := floorDiv(us, MicrosPerDay)
	if days < -719162 || days > 2932896 { // outside 0001-01-01 .. 9999-12-31
		return append(dst, FormatTimestamp(us)...)
	}
	rem := us - days*MicrosPerDay
	dst = AppendDate(dst, int32(days))
	secs, frac := rem/MicrosPerSecond, rem%MicrosPerSecond
	h, m, s := secs/3600, secs/60%60, secs%60
	dst = append(dst, ' ', byte('0'+h/10), byte('0'+h%10), ':', byte('0'+m/10), byte('0'+m%10), ':', byte('0'+s/10), byte('0'+s%10))
	if frac != 0 {
		var f [6]byte
		for i := 5; i >= 0; i-- {
			f[i] = byte('0' + frac%10)
			frac /= 10
		}
		n := 6
		for f[n-1] == '0' {
			n--
		}
		dst = append(dst, '.')
		dst = append(dst, f[:n]...)
	}
	return dst
}
