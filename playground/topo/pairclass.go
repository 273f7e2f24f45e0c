package topo

// MaxListedGPUs is the most GPUs of one host whose GPU × GPU pairs are
// listed one by one by default (the size of a large NVLink domain, and
// 4,032 pairs); beyond it the pairs are summarised by SummarizePairs and
// the full list is given only on request.
const MaxListedGPUs = 64

// MaxListedGPUNICs is the most GPU-NIC paths of one host listed one by
// one by default: as many rows as the GPU pairs of MaxListedGPUs GPUs
// (4,032), so both tables obey one reader-sized bound. Beyond it the
// paths are summarised by SummarizeNetPairs.
const MaxListedGPUNICs = MaxListedGPUs * (MaxListedGPUs - 1)

// PairClass is a set of GPU pairs that are reached the same way: path
// type, bandwidth, transport and its reason.
type PairClass struct {
	Type      PathType
	Bw        float32
	Transport Transport
	Via       string
	Reason    string
	// Count is the number of ordered pairs in the class; First is the
	// first of them in GPUPairs order.
	Count int
	First GPUPair
}

// SummarizePairs groups pairs into classes, in the order each class first
// appears. The work is linear in the pairs; the result has at most as many
// classes as there are distinct ways of reaching a GPU, a handful on real
// systems.
func SummarizePairs(pairs []GPUPair) []PairClass {
	type key struct {
		t      PathType
		bw     float32
		tr     Transport
		via    string
		reason string
	}
	idx := map[key]int{}
	var out []PairClass
	for _, p := range pairs {
		k := key{p.Type, p.Bw, p.Transport, p.Via, p.Reason}
		i, ok := idx[k]
		if !ok {
			i = len(out)
			idx[k] = i
			out = append(out, PairClass{Type: p.Type, Bw: p.Bw, Transport: p.Transport, Via: p.Via, Reason: p.Reason, First: p})
		}
		out[i].Count++
	}
	return out
}

// NetPairClass is a set of GPU-NIC paths reached the same way: path type,
// bandwidth, GPU Direct RDMA modes and whether PXN relays it.
type NetPairClass struct {
	Type         PathType
	Bw           float32
	GDR, GDRRead GdrMode
	PXN          bool
	// Count is the number of GPU-NIC paths in the class; First is the
	// first of them in GPUNetPairs order.
	Count int
	First GPUNetPair
}

// SummarizeNetPairs groups GPU-NIC paths into classes, in the order each
// class first appears; linear in the paths.
func SummarizeNetPairs(pairs []GPUNetPair) []NetPairClass {
	type key struct {
		t         PathType
		bw        float32
		gdr, read GdrMode
		pxn       bool
	}
	idx := map[key]int{}
	var out []NetPairClass
	for _, p := range pairs {
		k := key{p.Type, p.Bw, p.GDR, p.GDRRead, p.PXNPeer >= 0}
		i, ok := idx[k]
		if !ok {
			i = len(out)
			idx[k] = i
			out = append(out, NetPairClass{Type: p.Type, Bw: p.Bw, GDR: p.GDR, GDRRead: p.GDRRead, PXN: k.pxn, First: p})
		}
		out[i].Count++
	}
	return out
}
