package topo

// MaxListedGPUs is the most GPUs of one host whose GPU × GPU pairs are
// listed one by one by default (the size of a large NVLink domain, and
// 4,032 pairs); beyond it the pairs are summarised by SummarizePairs and
// the full list is given only on request.
const MaxListedGPUs = 64

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
