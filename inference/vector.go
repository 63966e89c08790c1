package inference

import (
	"encoding/binary"
	"fmt"
	"math"
)

// Vector is one embedding. It is sparse when Indices is non-nil: Values[i] is the
// coordinate at Indices[i], indices strictly ascending and below the embedder's Dim.
// It is dense when Indices is nil: Values holds all Dim coordinates.
//
// The n-gram embedder produces sparse vectors with a few hundred non-zeros out of 2^18
// dimensions; the ONNX embedder produces dense ones of a few hundred dimensions. Both are
// float32, which halves memory and is what the ONNX runtime returns.
type Vector struct {
	Indices []int32
	Values  []float32
}

// Sparse reports whether v stores only its non-zero coordinates.
func (v Vector) Sparse() bool { return v.Indices != nil }

// Len is the number of stored coordinates (non-zeros of a sparse vector, Dim of a dense one).
func (v Vector) Len() int { return len(v.Values) }

// Norm returns the Euclidean length of v.
func (v Vector) Norm() float64 {
	var s float64
	for _, x := range v.Values {
		s += float64(x) * float64(x)
	}
	return math.Sqrt(s)
}

// normalize scales v in place to unit length; a zero vector is left as is.
func (v Vector) normalize() {
	n := v.Norm()
	if n == 0 {
		return
	}
	inv := 1 / n
	for i, x := range v.Values {
		v.Values[i] = float32(float64(x) * inv)
	}
}

// vector encoding: byte kind (0 dense, 1 sparse), uvarint count, then count int32 indices
// (sparse only) and count float32 values, little endian.
func encodeVector(v Vector) []byte {
	n := len(v.Values)
	buf := make([]byte, 0, 1+binary.MaxVarintLen64+8*n)
	if v.Sparse() {
		buf = append(buf, 1)
	} else {
		buf = append(buf, 0)
	}
	buf = binary.AppendUvarint(buf, uint64(n))
	if v.Sparse() {
		for _, ix := range v.Indices {
			buf = binary.LittleEndian.AppendUint32(buf, uint32(ix))
		}
	}
	for _, x := range v.Values {
		buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(x))
	}
	return buf
}

func decodeVector(b []byte) (Vector, error) {
	if len(b) < 2 || b[0] > 1 {
		return Vector{}, fmt.Errorf("%w: corrupt vector encoding", ErrInvalid)
	}
	sparse := b[0] == 1
	n, k := binary.Uvarint(b[1:])
	if k <= 0 {
		return Vector{}, fmt.Errorf("%w: corrupt vector length", ErrInvalid)
	}
	b = b[1+k:]
	per := uint64(4)
	if sparse {
		per = 8
	}
	if uint64(len(b)) != n*per {
		return Vector{}, fmt.Errorf("%w: vector length %d does not match %d bytes", ErrInvalid, n, len(b))
	}
	v := Vector{Values: make([]float32, n)}
	if sparse {
		v.Indices = make([]int32, n)
		for i := range v.Indices {
			v.Indices[i] = int32(binary.LittleEndian.Uint32(b[4*i:]))
		}
		b = b[4*n:]
	}
	for i := range v.Values {
		v.Values[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v, nil
}
