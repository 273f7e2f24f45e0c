package estimate

import (
	"fmt"

	"github.com/distributed-nav/distributed-nav/playground/tune"
)

// nccl-tests (https://github.com/NVIDIA/nccl-tests) is cited at commit
// a0b82b2260cf5152b9f8c061bbf7eaf0ba096432 (version 2.19.6); the functions
// below follow its src/*.cu files at that commit.

// BusBwFactor is the factor nccl-tests multiplies algbw by to print busbw:
// 2(n-1)/n for AllReduce (src/all_reduce.cu#L59-L65), (n-1)/n for AllGather
// and ReduceScatter (src/all_gather.cu#L38-L44, src/reduce_scatter.cu#L37-L43)
// and 1 for Broadcast and Reduce. It is 0 for fewer than one rank.
func BusBwFactor(f tune.Func, nRanks int) float64 { return tune.BusBwFactor(f, nRanks) }

// AlgBwGBps is nccl-tests' algbw in GB/s (1e9 bytes/s): size / time, where
// size is what nccl-tests prints in its size column (see TestSize). A
// non-positive time gives 0.
func AlgBwGBps(size uint64, timeUs float64) float64 {
	if timeUs <= 0 {
		return 0
	}
	return float64(size) / timeUs / 1e3
}

// BusBwGBps is nccl-tests' busbw: algbw × BusBwFactor.
func BusBwGBps(f tune.Func, nRanks int, size uint64, timeUs float64) float64 {
	return AlgBwGBps(size, timeUs) * BusBwFactor(f, nRanks)
}

// TestSize returns the size nccl-tests prints (and divides by the time for
// algbw) when asked for a message of requested bytes of elements of eltSize
// bytes on nRanks ranks, and the element count it passes to NCCL (the count
// column). For AllReduce, Broadcast and Reduce the size is the requested
// bytes rounded down to whole elements. For AllGather and ReduceScatter
// nccl-tests gives each rank count/nranks elements rounded down to a
// multiple of 16 bytes (AllGatherGetCollByteCount, src/all_gather.cu#L10-L17,
// and ReduceScatterGetCollByteCount, src/reduce_scatter.cu#L10-L17) and
// prints the whole buffer, max(send, recv) = per-rank count × nranks ×
// eltSize (src/common.cu, TimeTest); the count column is the per-rank count.
func TestSize(f tune.Func, requested uint64, eltSize, nRanks int) (size, count uint64, err error) {
	if eltSize <= 0 || 16%eltSize != 0 {
		return 0, 0, fmt.Errorf("nccl-tests size: element size %d does not divide 16", eltSize)
	}
	if nRanks < 1 {
		return 0, 0, fmt.Errorf("nccl-tests size: %d ranks", nRanks)
	}
	es := uint64(eltSize)
	n := requested / es
	switch f {
	case tune.AllGather, tune.ReduceScatter:
		mask := uint64(16/eltSize - 1)
		base := (n / uint64(nRanks)) &^ mask
		return base * uint64(nRanks) * es, base, nil
	case tune.AllReduce, tune.Broadcast, tune.Reduce:
		return n * es, n, nil
	}
	return 0, 0, fmt.Errorf("nccl-tests size: unknown collective %v", f)
}
