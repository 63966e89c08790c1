package inference

import "math"

// Weights may be saved as IEEE 754 half-precision floats (Model.MarshalBinaryHalf): the
// default router ships inside the binary, and a head's weights are small numbers whose
// 11-bit mantissa changes an estimate by far less than its calibration error.

// toHalf rounds f to the nearest half-precision value (ties to even); values beyond the
// half range become ±Inf, NaN stays NaN.
func toHalf(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int((b >> 23) & 0xff)
	mant := b & 0x7fffff
	switch {
	case exp == 0xff: // Inf or NaN
		if mant != 0 {
			return sign | 0x7e00
		}
		return sign | 0x7c00
	case exp-127 > 15: // overflow
		return sign | 0x7c00
	case exp-127 >= -14: // normal
		e := uint32(exp - 127 + 15)
		m := mant >> 13
		rest := mant & 0x1fff
		h := uint32(sign) | e<<10 | m
		if rest > 0x1000 || (rest == 0x1000 && m&1 == 1) {
			h++ // may carry into the exponent, which is the right rounding
		}
		return uint16(h)
	case exp-127 >= -25: // subnormal half
		m := mant | 0x800000
		shift := uint32(-14 - (exp - 127) + 13)
		h := m >> shift
		rest := m & (1<<shift - 1)
		half := uint32(1) << (shift - 1)
		if rest > half || (rest == half && h&1 == 1) {
			h++
		}
		return sign | uint16(h)
	default: // underflow
		return sign
	}
}

// fromHalf widens a half-precision value to float32 exactly.
func fromHalf(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	mant := uint32(h & 0x3ff)
	switch {
	case exp == 0x1f:
		return math.Float32frombits(sign | 0x7f800000 | mant<<13)
	case exp == 0:
		if mant == 0 {
			return math.Float32frombits(sign)
		}
		v := float32(mant) / (1 << 24) // mant × 2^-24
		if sign != 0 {
			v = -v
		}
		return v
	default:
		return math.Float32frombits(sign | (exp+127-15)<<23 | mant<<13)
	}
}
