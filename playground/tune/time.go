package tune

// AlgoTime is ncclTopoGetAlgoTime
// (https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/graph/tuning.cc#L630-L655):
// the predicted time in µs of one collective of nBytes (NCCL's nBytes: the
// whole buffer for AllReduce/Broadcast/Reduce, nRanks × the per-rank count
// for AllGather and ReduceScatter) with algorithm a and protocol p, or -1
// when the cell is unusable (zero bandwidth). numPipeOps > 1 models several
// operations aggregated into one launch; values below 1 count as 1.
//
//	time = lat × latCount + nBytes / (1000 × bw)
//
// where tree AllReduce (and NVLSTree AllReduce on Blackwell with x86 CPUs)
// scale bw by the size-dependent correction factor, a multi-node ring Simple
// AllReduce multiplies lat by 1.4 (1.9 before Ampere) once each rank's share
// of a channel reaches 64 bytes, and latCount is numPipeOps for Ring and
// ceil(numPipeOps / 8) otherwise.
func (m *Model) AlgoTime(f Func, a Algorithm, p Protocol, nBytes uint64, numPipeOps int) float32 {
	if !f.Valid() || !a.Valid() || !p.Valid() {
		return -1
	}
	bw := m.Bandwidths[f][a][p]
	lat := m.Latencies[f][a][p]
	if bw == 0 {
		return -1
	}
	if numPipeOps < 1 {
		numPipeOps = 1
	}
	if k, ok := m.bandwidthFactor(f, a, p, nBytes); ok {
		bw = float32(bw * k)
	}
	return float32(m.latencyTerm(f, a, p, lat, nBytes, numPipeOps) + float32(float32(nBytes)/float32(1000*bw)))
}

// BandwidthFactor is the size-dependent factor AlgoTime scales the cell's
// bandwidth by at nBytes: the tree correction factor of a Tree AllReduce
// (and of an NVLSTree AllReduce on Blackwell with x86 CPUs), 1 otherwise.
func (m *Model) BandwidthFactor(f Func, a Algorithm, p Protocol, nBytes uint64) float32 {
	if !f.Valid() || !a.Valid() || !p.Valid() {
		return 1
	}
	k, _ := m.bandwidthFactor(f, a, p, nBytes)
	return k
}

func (m *Model) bandwidthFactor(f Func, a Algorithm, p Protocol, nBytes uint64) (float32, bool) {
	logSize := log2i(nBytes >> 6)
	if a == Tree && f == AllReduce && logSize >= 0 && logSize < 23 {
		return treeCorrectionFactor[p][logSize], true
	}
	if a == NVLSTree && f == AllReduce && logSize >= 0 && logSize < 24 && m.Sys.MinCompCap >= 100 && m.Sys.CPUArch == ArchX86 {
		return treeCorrectionFactor[p][logSize], true
	}
	return 1, false
}

// LatencyTime is the latency term of AlgoTime (µs): lat × latCount, with
// the multi-node ring Simple AllReduce factor when it applies at nBytes; -1
// when the cell is unusable.
func (m *Model) LatencyTime(f Func, a Algorithm, p Protocol, nBytes uint64, numPipeOps int) float32 {
	if !f.Valid() || !a.Valid() || !p.Valid() || m.Bandwidths[f][a][p] == 0 {
		return -1
	}
	if numPipeOps < 1 {
		numPipeOps = 1
	}
	return m.latencyTerm(f, a, p, m.Latencies[f][a][p], nBytes, numPipeOps)
}

func (m *Model) latencyTerm(f Func, a Algorithm, p Protocol, lat float32, nBytes uint64, numPipeOps int) float32 {
	if a == Ring && p == Simple && m.Sys.NNodes > 1 && f == AllReduce &&
		nBytes/uint64(m.CommNChannels*m.Sys.NRanks) >= 64 {
		k := 1.4
		if m.Sys.MinCompCap < 80 {
			k = 1.9
		}
		lat = f32(float64(lat) * k)
	}
	latCount := numPipeOps
	if a != Ring {
		latCount = (numPipeOps + MaxDevWorkBatchColls - 1) / MaxDevWorkBatchColls
	}
	return float32(lat * float32(latCount))
}
