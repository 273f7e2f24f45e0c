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
//     of hop the algorithm's graph uses (NVLink/NVSwitch, PCIe P2P within
//     a socket, PCIe P2P across sockets, SHM within a socket, SHM across
//     sockets, RDMA network, RDMA through the host, TCP network).
//
// The calibrated time of the chosen cell (algorithm a, protocol p) for a
// message of S bytes (nccl-tests' size) on n ranks is
//
//	Sbus = S × busfactor(collective, n)                  (nccl-tests' bus bytes)
//	t    = λ·L(a,p) + Sbus / P / (1 − exp(−(Sbus / (ρ·n_a·k_p))^γ))
//
// where L is the model's latency of the cell for large messages (NCCL's
// latency × latCount, with the ×1.4 of a multi-node ring Simple AllReduce,
// tune.LatencyTime; in one node a ring AllGather or ReduceScatter takes
// the AllReduce latency of its cell, whose floor it measures, see
// latencyFunc), λ scales it (the
// small-message floor), ρ·n_a·k_p is the bus size over which the bandwidth
// ramps up to the plateau P and γ sets how gradual the ramp is. λ, ρ and
// γ describe the software and the platform's per-step costs rather than a
// bound of the topology, so a class fits them only where at least two
// independent sources have rows in that regime (MinShapeSources); a class
// without keeps NCCL's own latency (λ = 1) and no ramp beyond it. The ramp
// grows with the protocol's buffer (k_p = buffer(p) / buffer(Simple)) and,
// for Ring and PAT, with the ring length (n_a = n: the message is cut into
// n pieces that each cross the pipeline in buffer-sized chunks); Tree,
// NVLS, NVLSTree and CollNet stream the whole message in buffer-sized
// chunks, so n_a = 1 (RampRanks).
//
// The bandwidth parameter of a class is fitted on its plateau rows (64
// MiB and up) alone, and λ, ρ and γ then on every row with it held: a
// class that may not fit a ramp must not fold its small-message rows into
// its bandwidth, or systems of another shape inherit the distortion.
//
// The plateau P is where the hardware enters. NCCL decides the algorithm,
// the protocol and the channels; its model then gives the cell a bus
// bandwidth B(a,p) = (its share of the graph) × G(a), where G(a) is the
// search's channels × per-channel bandwidth. On one node the estimator
// keeps the share B/G (protocol and algorithm factors) and replaces G by
// the bandwidth of the graph's slowest hop, each hop bounded by what
// carries it:
//
//   - NVLink P2P: η_nvlink × links × per-link bandwidth (NCCL's NVLink path
//     bandwidth); without an NVSwitch (class nvlink-direct, with its own
//     efficiency, latency factor and ramp) the links of a pair carry only
//     the channels stepping over that pair, so a pair used by k of C
//     channels allows C/k times its links (a 4-GPU all-to-all board
//     reaches its GPUs' 18 links, a bridged pair keeps the bridge's);
//     where direct NVLink has too few sources for its efficiency it takes
//     the one fitted through NVSwitches (same links and link protocol);
//   - PCIe P2P: η_pcie × the narrowest PCIe link between the GPUs (the
//     switch or the root complex; generation × width as NCCL reads them,
//     src/graph/topo.cc, ncclTopoAddPci);
//   - SHM: two copies through host memory, the sender's GPU writing into a
//     buffer on the receiver's side and the receiver's GPU reading it
//     (src/transport/shm.cc, NCCL_SHM_LOCALITY), so min(η_pcie × the
//     narrower GPU link, H) where H is the rate at which host memory stages
//     the traffic (fitted in GB/s: measured SHM throughput follows the CPU
//     and memory, not the GPUs' links, and not the ring bandwidth NCCL's
//     search assigned);
//   - SHM across sockets: also η_xsocket × NCCL's inter-socket bandwidth
//     (ncclTopoGetInterCpuBw);
//   - PCIe P2P across sockets (path SYS, P2P forced with
//     NCCL_P2P_LEVEL=SYS; class pcie-xsocket): η_pcie-xsocket × the GPUs'
//     own links, not NCCL's inter-socket constant: the writes cross the
//     inter-socket link, whose cost is the platform's, so it has its own
//     efficiency (a switch box and an NPS4 host differ by 1.08 to 0.86 of
//     the link).
//
// No efficiency exceeds the raw rate of its link over the figure NCCL
// gives it: 1 on the network (NCCL's network bandwidth is the NIC line
// rate), 1.313 on PCIe (128/130 encoding against NCCL's 1.5 GB/s per Gen4
// lane), 1.25 on NVLink (25 GB/s per link against NCCL's 20-20.6).
//
// η_pcie is shared by PCIe P2P and SHM. NVLS and NVLS Tree in one node
// take NCCL's own NVLS bandwidth, P = B(a,p): NCCL derates it by an NVLS
// efficiency measured per GPU generation, and the switch-reduced traffic
// is not the P2P copies η_nvlink is fitted on. On several nodes
// P = η × B(a,p): NCCL's network bandwidth is the NIC line rate of the
// topology. The network has three classes with their own η: RDMA with
// GPUDirect RDMA on a path below the host bridge (net-rdma), RDMA whose
// GPU-NIC traffic goes through a CPU (no GPUDirect RDMA, so staged in host
// memory, or GPUDirect RDMA across a host bridge or the sockets:
// net-host), and sockets (net-tcp). A bandwidth parameter whose plateau
// fewer than two independent sources show (MinShapeSources, as for λ and
// the ramp) falls back to its physical bound (η = 1, H unbounded) rather
// than to a factor one machine set; with every parameter at its bound a
// multi-node estimate is NCCL's own model. A message is never predicted to be faster
// than a smaller one: where NCCL's protocol switch would make the
// calibrated curve drop, the time is held at the largest time of any
// smaller message and the result says so.
//
// The parameters live in data/calibration.yaml with, for each, the datasets
// it was fitted on; Fit regenerates them from data/measurements/ and
// Validate reports the busbw error of both predictions against every
// dataset, in sample (the committed calibration) and out of sample: for
// each independent source (Dataset.SourceKey: the same author, GitHub
// thread or owner) the parameters are refitted without every dataset of
// that source and its datasets are predicted with them (leave one source
// out). The error band of a class is built from those out-of-sample errors
// (their 5 % and 95 % quantiles), so it says how far off the estimate is
// on a system the calibration has not seen. Every calibrated prediction
// carries that band (Calibrated.Band), the datasets behind the class's
// efficiency and the number of independent sources among them
// (Calibrated.NSources).
//
// A class whose out-of-sample error on its own datasets (median over them)
// is larger than NCCL's model's is handed back to NCCL's model
// (ClassParams.NCCLModel, which says by how much): its estimate is then the
// model's time, its band the model's error, and Calibrated.Support says so.
// Calibration is meant to help on systems it has not seen; where leaving a
// source out shows that it does not, the model's own numbers are the better
// answer.
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
