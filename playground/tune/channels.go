package tune

// CommChannels returns comm->nChannels, the number of channels collectives
// run on, from the ring/tree search channel count as ncclTopoPostset derives
// it (https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/graph/connect.cc#L459-L506):
//
//  1. the rings are duplicated: min(64, 2·n);
//  2. with CollNet enabled, +50% when the CollNetChain graph's intra
//     bandwidth exceeds its inter bandwidth and there is more than one rank
//     per node;
//  3. on Hopper+ across nodes, when the ring's bwIntra > 45 and fewer than 16
//     channels: ×2;
//  4. with an "unpack" network device across nodes and fewer than 16
//     channels (NCCL_UNPACK_DOUBLE_NCHANNELS=1): ×2;
//  5. clamp to min(ncclMaxNchannels(), config.maxCTAs), then copy channels
//     up to max(ncclMinNchannels(), config.minCTAs).
//
// g must already have equal ring and tree channel counts (NewModel does it).
func CommChannels(sys System, g Graphs, opts Options, collNetEnable bool) int {
	n := min(MaxChannels, 2*g.Ring.NChannels)
	if collNetEnable {
		cc := g.CollNetChain
		if float32(cc.BwIntra) > float32(cc.BwInter) && sys.NRanks > sys.NNodes {
			n = min(MaxChannels, n+n/2)
		}
	}
	if sys.MinCompCap >= 90 && sys.NNodes > 1 && float64(float32(g.Ring.BwIntra)) > 45.0 && n < 16 {
		n *= 2
	}
	if sys.NetDeviceType == NetDeviceUnpack && sys.NNodes > 1 && n < 16 && opts.UnpackDoubleNChannels != 0 {
		n *= 2
	}
	n = min(opts.MaxNChannels, n, opts.MaxCTAs)
	// copyChannels(comm, n, target) returns target when it is larger, n otherwise.
	return max(n, opts.MinNChannels, opts.MinCTAs)
}

// NVLSChannels returns comm->nvlsChannels as ncclNvlsTuning sets it
// (https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/transport/nvls.cc#L202-L246),
// or 0 when NVLS is unavailable. The base is 16 channels before Blackwell,
// 24 on one Blackwell node and 32 across Blackwell nodes; Blackwell
// multi-node jobs then adapt it to the NIC speed and GPUs per node
// (nvls.cc:164-200); NCCL_NVLS_NCHANNELS overrides; the result is clamped
// to [minCTAs, maxCTAs]. The rank's own compute capability is taken to be
// MinCompCap.
func NVLSChannels(sys System, nvlsSupport bool, opts Options) int {
	if !nvlsSupport {
		return 0
	}
	n := 16
	if sys.MinCompCap >= 100 {
		if sys.NNodes > 1 {
			n = 32
		} else {
			n = 24
		}
	}
	if sys.MinCompCap >= 100 && sys.NNodes > 1 {
		nicBw := float32(sys.MinNetBw)
		switch {
		case sys.NNodes == 2 && nicBw >= 48:
			n = 32
		case nicBw >= 96:
			if sys.minLocalRanks() <= 8 {
				n = 24
			} else {
				n = 32
			}
		case nicBw >= 48:
			n = 24
		}
	}
	if opts.NVLSCTAsSet {
		n = opts.NVLSCTAs
	}
	return max(opts.MinCTAs, min(opts.MaxCTAs, n))
}
