//go:build race

package inference

// raceEnabled is true under -race. The race detector turns on checkptr, which aborts the
// process inside gomlx's pure-Go matmul kernels (github.com/gomlx/compute v0.1.2 does
// pointer arithmetic that checkptr rejects), so the ONNX tests skip themselves there.
const raceEnabled = true
