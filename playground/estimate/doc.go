// Package estimate predicts what nccl-tests would measure for one collective
// on a modelled system, next to what NCCL's own tuning model believes.
//
// Two predictions come out of every request:
//
//   - model: NCCL v2.30.7-1's tuning-model time for the algorithm and
//     protocol NCCL picks (package tune). This is what drives NCCL's choice;
//     it is not a measurement.
//   - calibrated: the time of that same algorithm/protocol with latency and
//     bandwidth corrected per path class, the class being the slowest kind
//     of hop the algorithm's graph uses (NVLink/NVSwitch, PCIe P2P, SHM
//     within a socket, SHM across sockets, RDMA network, TCP network).
//
// The calibrated time of the chosen cell (algorithm a, protocol p) for a
// message of S bytes (nccl-tests' size) on n ranks is
//
//	Sbus = S × busfactor(collective, n)                  (nccl-tests' bus bytes)
//	t    = λ·L(a,p) + Sbus / (η·B(a,p)) / (1 − exp(−(Sbus / (ρ·n·k_p))^γ))
//
// where L is the model's latency of the cell and B its bandwidth expressed
// as bus bandwidth (the model's algorithm bandwidth × busfactor, corrected
// on single-node P2P graphs for the channel quantisation of NCCL's search,
// see Routing.LinkFactor). Per path class, λ scales the latency (the small-message floor), η is the fraction
// of the model's bandwidth real runs reach (the plateau), and ρ·n·k_p is the
// bus size over which the bandwidth ramps up to the plateau (the pipeline
// fills: it grows with the ring length n and with the protocol's buffer,
// k_p = buffer(p) / buffer(Simple)); γ sets how gradual the ramp is. The ramp factor tends to 1 for large messages and
// makes the bandwidth term grow like S^(1−γ) for small ones, so the time
// falls to the latency floor. A message is never predicted to be faster
// than a smaller one: where NCCL's protocol switch would make the
// calibrated curve drop, the time is held at the largest time of any
// smaller message and the result says so.
//
// The parameters live in data/calibration.yaml with, for each, the datasets
// it was fitted on; Fit regenerates them from data/measurements/ and
// Validate reports the busbw error of both predictions against every
// dataset. Every calibrated prediction carries the error band observed for
// its class and the number of datasets behind it.
//
// DefaultCalibration and DefaultDatasets return those files compiled in as
// Go values (calibration_data.go, datasets_data.go, written by `go generate
// ./playground/estimate` and checked against data/ by TestCalibrationData
// and TestDatasetsData), so that the wasm playground links neither a YAML
// nor a JSON parser. ParseCalibration and Marshal, which read and write the
// YAML file, are left out of js/wasm builds.
//
// algbw and busbw follow nccl-tests exactly: algbw = size / time, where size
// is the per-rank buffer for AllReduce, Broadcast and Reduce and the whole
// gathered buffer (count × nranks × element size) for AllGather and
// ReduceScatter; busbw = algbw × 2(n-1)/n for AllReduce, × (n-1)/n for
// AllGather and ReduceScatter, × 1 for Broadcast and Reduce.
package estimate
