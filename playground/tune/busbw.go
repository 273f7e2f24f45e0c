package tune

// BusBwFactor converts an algorithm bandwidth (bytes / time) into the "bus
// bandwidth" nccl-tests prints, so that the number is comparable with the
// hardware's link speed whatever the rank count: 2(n-1)/n for AllReduce,
// (n-1)/n for AllGather and ReduceScatter, 1 for Broadcast and Reduce (the
// AllReduceGetBw, AllGatherGetBw, ... functions in nccl-tests' src/*.cu and
// its doc/PERFORMANCE.md). For AllGather and ReduceScatter the byte count is
// the whole gathered (or scattered) buffer, nRanks × the per-rank count,
// which is also the nBytes NCCL's model uses.
func BusBwFactor(f Func, nRanks int) float64 {
	if nRanks < 1 {
		return 0
	}
	n := float64(nRanks)
	switch f {
	case AllReduce:
		return 2 * (n - 1) / n
	case AllGather, ReduceScatter:
		return (n - 1) / n
	}
	return 1
}
